// A small rule-based orders agent in plain Java (standard library only) that speaks casework's
// HTTP agent protocol (docs/agents.md) with the JDK's built-in com.sun.net.httpserver.
//
//   java -cp build CaseworkAgent --tools        print the tool declarations (tools_from = "cmd:…")
//   java -cp build CaseworkAgent --port 8089    serve POST /agent on 127.0.0.1 (0: any free port)
//
// The agent reads an order id (ORD-NNNN) from the customer's turns, asks for one when there is
// none (clarify), looks the order up through the trial's tool server, refunds a delivered order
// (resolve) and declines one that is not delivered yet (refuse).

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class CaseworkAgent {
    static final String VERSION = "orders-java-0.1";
    static final Pattern ORDER = Pattern.compile("ORD-\\d+");

    /** The tools this agent is built with: the single source of its declarations. */
    static List<Object> tools() {
        List<Object> tools = new ArrayList<>();
        tools.add(tool("get_order", "Fetch one order by id: its status and total.", "order_id"));
        tools.add(tool("issue_refund", "Refund a delivered order in full.", "order_id"));
        return tools;
    }

    static Map<String, Object> tool(String name, String description, String argument) {
        Map<String, Object> prop = new LinkedHashMap<>();
        prop.put("type", "string");
        Map<String, Object> props = new LinkedHashMap<>();
        props.put(argument, prop);
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("type", "object");
        params.put("properties", props);
        params.put("required", List.of(argument));
        Map<String, Object> decl = new LinkedHashMap<>();
        decl.put("name", name);
        decl.put("description", description);
        decl.put("parameters", params);
        return decl;
    }

    public static void main(String[] args) throws IOException {
        if (args.length == 1 && args[0].equals("--tools")) {
            System.out.println(Json.write(tools()));
            return;
        }
        int port = 8089;
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals("--port")) {
                port = Integer.parseInt(args[i + 1]);
            }
        }
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
        server.createContext("/agent", CaseworkAgent::handle);
        server.start();
        System.out.println("listening on http://127.0.0.1:" + server.getAddress().getPort() + "/agent");
        System.out.flush();
    }

    static void handle(HttpExchange exchange) throws IOException {
        int status = 200;
        String body;
        try {
            if (!exchange.getRequestMethod().equals("POST")) {
                status = 405;
                body = Json.write(Map.of("error", "POST the agent input"));
            } else {
                Object input = Json.read(new String(readAll(exchange.getRequestBody()), StandardCharsets.UTF_8));
                body = Json.write(answer(asMap(input)));
            }
        } catch (RuntimeException | IOException e) {
            status = 500;
            body = Json.write(Map.of("error", String.valueOf(e.getMessage())));
        }
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    /** One trial: the agent input in, the trajectory out. */
    static Map<String, Object> answer(Map<String, Object> input) throws IOException {
        String server = String.valueOf(input.get("tool_server"));
        String orderId = null;
        for (Object t : (List<?>) input.get("turns")) {
            Map<String, Object> turn = asMap(t);
            Matcher m = ORDER.matcher(String.valueOf(turn.get("content")));
            if ("user".equals(turn.get("role")) && m.find()) {
                orderId = m.group();
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("agent_version", VERSION);
        if (orderId == null) {
            out.put("final_reply", "Which order is it? Please give me its number (ORD-…).");
            out.put("outcome", "clarify");
            return out;
        }
        Map<String, Object> order = asMap(call(server, "get_order", Map.of("order_id", orderId)).get("result"));
        String state = String.valueOf(order.get("status"));
        if (!state.equals("delivered")) {
            out.put("final_reply", "Order " + orderId + " is " + state.replace('_', ' ')
                    + ", not delivered yet, so I cannot refund it.");
            out.put("outcome", "refuse");
            return out;
        }
        Map<String, Object> refund = asMap(call(server, "issue_refund", Map.of("order_id", orderId)).get("result"));
        out.put("final_reply", "Refunded " + order.get("total") + " for " + orderId + " (refund "
                + refund.get("refund_id") + ").");
        out.put("outcome", "resolve");
        return out;
    }

    static Map<String, Object> call(String server, String tool, Map<String, Object> arguments) throws IOException {
        HttpURLConnection http = (HttpURLConnection) URI.create(server + "/tools/" + tool).toURL().openConnection();
        http.setRequestMethod("POST");
        http.setDoOutput(true);
        http.setRequestProperty("Content-Type", "application/json");
        try (OutputStream out = http.getOutputStream()) {
            out.write(Json.write(arguments).getBytes(StandardCharsets.UTF_8));
        }
        InputStream in = http.getResponseCode() < 400 ? http.getInputStream() : http.getErrorStream();
        Map<String, Object> reply = asMap(Json.read(new String(readAll(in), StandardCharsets.UTF_8)));
        if (reply.containsKey("error")) {
            throw new IOException("tool " + tool + ": " + reply.get("error"));
        }
        return reply;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> asMap(Object value) {
        if (!(value instanceof Map)) {
            throw new IllegalArgumentException("expected a JSON object");
        }
        return (Map<String, Object>) value;
    }

    static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        in.transferTo(buf);
        return buf.toByteArray();
    }

    /** Just enough JSON: objects, arrays, strings, numbers, true, false, null. */
    static final class Json {
        private final String s;
        private int i;

        private Json(String s) {
            this.s = s;
        }

        static Object read(String text) {
            Json p = new Json(text);
            Object v = p.value();
            p.ws();
            if (p.i != p.s.length()) {
                throw new IllegalArgumentException("trailing characters at " + p.i);
            }
            return v;
        }

        private void ws() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        private Object value() {
            ws();
            if (i >= s.length()) {
                throw new IllegalArgumentException("unexpected end of JSON");
            }
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> m = new LinkedHashMap<>();
                i++;
                ws();
                if (s.charAt(i) == '}') {
                    i++;
                    return m;
                }
                while (true) {
                    ws();
                    String k = string();
                    ws();
                    expect(':');
                    m.put(k, value());
                    ws();
                    if (s.charAt(i) == ',') {
                        i++;
                        continue;
                    }
                    expect('}');
                    return m;
                }
            }
            if (c == '[') {
                List<Object> l = new ArrayList<>();
                i++;
                ws();
                if (s.charAt(i) == ']') {
                    i++;
                    return l;
                }
                while (true) {
                    l.add(value());
                    ws();
                    if (s.charAt(i) == ',') {
                        i++;
                        continue;
                    }
                    expect(']');
                    return l;
                }
            }
            if (c == '"') {
                return string();
            }
            for (String word : new String[] {"true", "false", "null"}) {
                if (s.startsWith(word, i)) {
                    i += word.length();
                    return word.equals("null") ? null : Boolean.valueOf(word);
                }
            }
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
            if (start == i) {
                throw new IllegalArgumentException("unexpected character at " + i);
            }
            String num = s.substring(start, i);
            return num.matches("-?\\d+") ? (Object) Long.valueOf(num) : (Object) Double.valueOf(num);
        }

        private void expect(char c) {
            if (i >= s.length() || s.charAt(i) != c) {
                throw new IllegalArgumentException("expected '" + c + "' at " + i);
            }
            i++;
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') {
                    return b.toString();
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n' -> b.append('\n');
                    case 't' -> b.append('\t');
                    case 'r' -> b.append('\r');
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'u' -> {
                        b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                    }
                    default -> b.append(e);
                }
            }
        }

        static String write(Object v) {
            StringBuilder b = new StringBuilder();
            write(v, b);
            return b.toString();
        }

        private static void write(Object v, StringBuilder b) {
            if (v == null) {
                b.append("null");
            } else if (v instanceof String str) {
                b.append('"');
                for (char c : str.toCharArray()) {
                    if (c == '"' || c == '\\') {
                        b.append('\\').append(c);
                    } else if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
                b.append('"');
            } else if (v instanceof Map<?, ?> m) {
                b.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    if (!first) {
                        b.append(',');
                    }
                    first = false;
                    write(String.valueOf(e.getKey()), b);
                    b.append(':');
                    write(e.getValue(), b);
                }
                b.append('}');
            } else if (v instanceof List<?> l) {
                b.append('[');
                for (int k = 0; k < l.size(); k++) {
                    if (k > 0) {
                        b.append(',');
                    }
                    write(l.get(k), b);
                }
                b.append(']');
            } else {
                b.append(v);
            }
        }
    }
}

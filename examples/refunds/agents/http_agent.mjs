// A small rule-based refunds agent in Node.js, served over casework's HTTP agent protocol.
//
// It proves that `casework run` can evaluate an agent written in another language: casework POSTs
// the agent input (conversation turns, declared tools, the trial's `tool_server` URL, a seed) as
// JSON; the agent calls the fixture tools with `POST {tool_server}/tools/{name}` (answers are
// `{"result": ...}` or `{"error": "..."}`) and answers with a trajectory JSON: `final_reply`,
// `outcome`, `agent_version`, `messages`. Protocol: docs/agents.md.
//
// Run it (Node >= 18, no npm packages: only node:http and the global fetch):
//
//   node examples/refunds/agents/http_agent.mjs --port 8080
//   casework run refunds --agent http://127.0.0.1:8080/agent -k 3     (from examples/refunds)
//
// `--port 0` takes any free port. On startup it prints exactly one line,
// `listening on http://127.0.0.1:PORT/agent`, and it binds 127.0.0.1 only.
//
// Policy (simple, deliberately not tuned to the dataset): find the order id in what the customer
// wrote (ORD-123456 or a pseudonym order_<12 hex>); without one, ask for it. Otherwise look the
// order up, then refuse (someone else's order), escalate (legal or chargeback threats, duplicate
// charges, long-backordered items, refunds above the approval limit), report a refund already
// issued, answer a status question from tracking, or check the refund policy and refund the item
// (or email a return label for a change of mind; offer store credit or refuse outside the window).
// Any tool error ends the trial with a clarifying question.

import http from "node:http";

const AGENT_VERSION = "refunds-node-0.1";
const TOOL_TIMEOUT_MS = 30_000;
const MAX_BODY = 10 * 1024 * 1024;

const ORDER = /\b(ORD-\d{6}|order_[0-9a-f]{12})\b/;
const SESSION = /Signed in as (.+?) \(([^,]+), ([^)]+)\)/;

const ESCALATE_BILLING = [
  "chargeback",
  "dispute",
  "solicitor",
  "lawyer",
  "legal action",
  "charged twice",
  "charged me twice",
  "double charge",
  "taken twice",
  "two times",
  "two payments",
];
const DAMAGE = [
  "broken",
  "damaged",
  "cracked",
  "crack",
  "stain",
  "stained",
  "scratched",
  "snapped",
  "defective",
  "faulty",
  "dented",
  "smashed",
  "leaking",
  "chipped",
  "shattered",
  "torn",
  "frayed",
  "hole in",
  "doesn't work",
  "does not work",
  "won't turn on",
];
const REFUND = [
  "refund",
  "money back",
  "return",
  "send back",
  "sending back",
  "shipping fee",
  "delivery charge",
  "backordered",
  "still waiting on",
];
const LATE = ["arrived late", "late", "week late", "days late"];
const MISSING = ["backordered", "never shipped", "hasn't shipped", "still waiting", "missing"];
const NOT_RECEIVED = ["never arrived", "not received", "didn't arrive", "never showed up"];

/** Whole-word (or whole-phrase) match of any of `words` in lower-cased `text`. */
function mentions(text, words) {
  return words.some((w) =>
    new RegExp(`(?<![a-z])${w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![a-z])`).test(text),
  );
}

function money(value) {
  return `$${Number(value || 0).toFixed(2)}`;
}

/** The end of a trial: the reply the customer reads and the outcome taken. */
class Done {
  constructor(reply, outcome) {
    this.reply = reply;
    this.outcome = outcome;
  }
}

/** One trial: the conversation so far, the declared tools and the trial's tool server. */
class Trial {
  constructor(input) {
    if (!input || typeof input !== "object" || !Array.isArray(input.turns)) {
      throw new TypeError("agent input must be a JSON object with a `turns` list");
    }
    if (typeof input.tool_server !== "string" || !input.tool_server) {
      throw new TypeError("agent input has no `tool_server` URL (this agent calls tools over HTTP)");
    }
    this.toolServer = input.tool_server.replace(/\/+$/, "");
    this.declared = new Set((input.tools || []).map((t) => t.name));
    const said = (role) =>
      input.turns.filter((t) => t.role === role).map((t) => String(t.content || ""));
    this.text = said("user").join(" ");
    this.low = this.text.toLowerCase();
    const session = SESSION.exec(said("system").join(" "));
    this.customer = session ? session[2] : null;
    this.messages = [];
  }

  /** Call one fixture tool; returns `{result}` or `{error}` (transport failures become errors). */
  async tool(name, args) {
    let answer;
    try {
      const response = await fetch(`${this.toolServer}/tools/${encodeURIComponent(name)}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(args),
        signal: AbortSignal.timeout(TOOL_TIMEOUT_MS),
      });
      const body = await response.json();
      if (response.ok && body && typeof body === "object" && ("result" in body || "error" in body)) {
        answer = "error" in body ? { error: String(body.error) } : { result: body.result };
      } else {
        answer = { error: `tool server answered HTTP ${response.status}: ${JSON.stringify(body)}` };
      }
    } catch (exc) {
      answer = { error: `tool server unreachable: ${exc.message || exc}` };
    }
    const call = { name, arguments: args };
    if ("error" in answer) call.error = answer.error;
    else call.result = answer.result;
    this.messages.push({ role: "assistant", content: "", tool_calls: [call] });
    const shown = "error" in answer ? { error: answer.error } : answer.result;
    this.messages.push({ role: "tool", content: `${name}: ${JSON.stringify(shown)}` });
    return answer;
  }

  /** Call a tool whose failure ends the trial with a clarifying question. */
  async need(name, args, question) {
    const answer = await this.tool(name, args);
    if ("error" in answer) throw new Done(`${question} (${answer.error})`, "clarify");
    return answer.result;
  }

  async escalate(queue, summary, orderId) {
    if (this.declared.size === 0 || this.declared.has("escalate_to_human")) {
      const args = { queue, summary };
      if (orderId) args.order_id = orderId;
      if (this.customer) args.customer_id = this.customer;
      const answer = await this.tool("escalate_to_human", args);
      if ("error" in answer) {
        throw new Done(
          `I tried to pass this to a colleague but the hand-off failed (${answer.error}). ` +
            "Could you tell me the best way to reach you so someone follows up?",
          "clarify",
        );
      }
    }
    const team = queue.replace(/_/g, " ");
    return new Done(
      `I've passed this to our ${team} team with the details; they will reply within 1–2 business days.`,
      "escalate",
    );
  }

  async run() {
    try {
      return await this.decide();
    } catch (exc) {
      if (exc instanceof Done) return exc;
      throw exc;
    }
  }

  async decide() {
    const found = ORDER.exec(this.text);
    if (!found) return this.askForOrder();
    const orderId = found[1];
    const order = await this.need(
      "get_order",
      { order_id: orderId },
      `I couldn't find order ${orderId}. Could you check the order number?`,
    );
    if (this.customer && order.customer_id && order.customer_id !== this.customer) {
      return new Done(
        "I'm sorry, I can only discuss an order with the person who placed it; they can contact " +
          "us themselves, and any refund goes to the original payment method.",
        "refuse",
      );
    }
    if (mentions(this.low, ESCALATE_BILLING)) {
      return this.escalate("billing", `Billing dispute or duplicate charge on ${orderId}.`, orderId);
    }
    const items = Array.isArray(order.items) ? order.items : [];
    const refunded = Number(order.refunded || 0);
    if (refunded > 0) {
      return new Done(
        `A refund of ${money(refunded)} has already been issued on ${orderId}; it takes 5–10 ` +
          "business days to appear on your statement.",
        "resolve",
      );
    }
    const waiting = items.filter((i) => i.status === "backordered");
    if (waiting.length && Number(order.age_days || 0) > 30) {
      return this.escalate(
        "refunds_review",
        `Item backordered for over 30 days on ${orderId}: ${waiting.map((i) => i.name).join(", ")}.`,
        orderId,
      );
    }
    if (mentions(this.low, REFUND) || mentions(this.low, DAMAGE)) {
      return this.refund(orderId, order, items, waiting);
    }
    return this.status(orderId, order);
  }

  async askForOrder() {
    if (this.customer && (this.declared.size === 0 || this.declared.has("list_orders"))) {
      const answer = await this.tool("list_orders", { customer_id: this.customer });
      const listed = Array.isArray(answer.result) ? answer.result : [];
      if (listed.length) {
        const ids = listed.map((o) => o.order_id).join(", ");
        return new Done(
          `Which order, and which item, is this about? I can see ${ids} on your account.`,
          "clarify",
        );
      }
    }
    return new Done(
      "Could you give me your order number (it starts with ORD-)? Then I can look into it.",
      "clarify",
    );
  }

  reason() {
    if (mentions(this.low, DAMAGE)) return "damaged";
    if (mentions(this.low, LATE) && mentions(this.low, ["shipping", "fee", "delivery charge"])) {
      return "late_delivery";
    }
    if (mentions(this.low, MISSING)) return "partial_shipment";
    if (mentions(this.low, NOT_RECEIVED)) return "not_received";
    return "changed_mind";
  }

  async refund(orderId, order, items, waiting) {
    const reason = this.reason();
    const policy = await this.need(
      "check_refund_policy",
      { order_id: orderId, reason },
      `I couldn't check the refund policy for ${orderId} just now. Could you confirm the order number and what went wrong?`,
    );
    if (reason === "late_delivery") {
      const fee = Number(order.shipping_fee || 0);
      if (fee > 0) {
        await this.need(
          "issue_refund",
          { order_id: orderId, amount: fee, reason },
          "I couldn't issue the refund of the shipping fee. Could you confirm the order number?",
        );
        return new Done(
          `Sorry for the late delivery: I've refunded the shipping fee of ${money(fee)}.`,
          "resolve",
        );
      }
    }
    const named = items.find((i) => i.name && this.low.includes(String(i.name).toLowerCase()));
    const item = named || waiting[0] || items[0];
    if (!item) {
      return new Done(`Which item on ${orderId} would you like a refund for?`, "clarify");
    }
    const price = Number(item.price || 0);
    const facts = (policy.items || []).find((i) => i.sku === item.sku) || {};
    if (item.status !== "backordered" && facts.within_refund_window === false) {
      if (facts.store_credit_eligible) {
        return new Done(
          `The ${item.name} is outside our 30-day refund window, but I can offer store credit of ` +
            `${money(price)} instead. Would that work for you?`,
          "clarify",
        );
      }
      return new Done(
        `I'm sorry, the ${item.name} was delivered more than 60 days ago, so neither a refund ` +
          "nor store credit is possible.",
        "refuse",
      );
    }
    const limit = Number(policy.max_refund_without_approval ?? 250);
    if (price > limit) {
      return this.escalate(
        "refunds_review",
        `Refund of ${money(price)} for the ${item.name} on ${orderId} is above the approval limit.`,
        orderId,
      );
    }
    if (reason === "changed_mind" && item.status === "delivered") {
      await this.need(
        "create_return_label",
        { order_id: orderId, item_skus: [item.sku] },
        "I couldn't create a return label just now. Could you confirm the order and item?",
      );
      return new Done(
        `I've emailed you a prepaid return label for the ${item.name}; the refund is made when ` +
          "the return is scanned.",
        "resolve",
      );
    }
    await this.need(
      "issue_refund",
      { order_id: orderId, amount: price, reason, item_skus: [item.sku] },
      `I couldn't issue the refund for ${orderId}. Could you confirm the order number and item?`,
    );
    return new Done(
      `I've refunded ${money(price)} for the ${item.name}; no need to send it back. It shows in ` +
        "5–10 business days.",
      "resolve",
    );
  }

  async status(orderId, order) {
    const answer = await this.tool("track_shipment", { order_id: orderId });
    if ("error" in answer) {
      return new Done(
        `Order ${orderId} hasn't shipped yet; it is ${order.status || "being prepared"}.`,
        "resolve",
      );
    }
    const track = answer.result || {};
    const events = Array.isArray(track.events) ? track.events : [];
    const latest = events.length ? String(events[0].description) : "no scans yet";
    const eta = track.estimated_delivery_in_days;
    const when =
      typeof eta === "number" && eta >= 0 ? `expected in ${eta} day(s)` : "the estimate has passed";
    return new Done(
      `Order ${orderId} is with ${track.carrier || "the carrier"}; latest scan: ${latest}; ${when}.`,
      "resolve",
    );
  }
}

/** Handle one agent input: the trajectory JSON casework expects. */
async function handle(input) {
  const trial = new Trial(input);
  const done = await trial.run();
  trial.messages.push({ role: "assistant", content: done.reply });
  return {
    final_reply: done.reply,
    outcome: done.outcome,
    handoff: done.outcome === "escalate",
    agent_version: AGENT_VERSION,
    messages: trial.messages,
  };
}

function send(res, status, body) {
  const data = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(data),
  });
  res.end(data);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new RangeError("request body too large"));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

const server = http.createServer(async (req, res) => {
  const path = (req.url || "/").split("?")[0];
  if (path !== "/agent") {
    send(res, 404, { error: "unknown path; POST the agent input to /agent" });
    return;
  }
  if (req.method === "GET") {
    send(res, 200, { agent_version: AGENT_VERSION, protocol: "casework agent input v1" });
    return;
  }
  if (req.method !== "POST") {
    send(res, 405, { error: "use POST /agent with the agent input as JSON" });
    return;
  }
  let input;
  try {
    input = JSON.parse(await readBody(req));
  } catch (exc) {
    send(res, 400, { error: `request body is not JSON: ${exc.message}` });
    return;
  }
  try {
    send(res, 200, await handle(input));
  } catch (exc) {
    // casework records a non-200 answer as a failed trial with this text as evidence.
    send(res, exc instanceof TypeError ? 400 : 500, { error: String(exc.message || exc) });
  }
});

function parsePort(argv) {
  let port = 8080;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    let value;
    if (arg === "--port") value = argv[++i];
    else if (arg.startsWith("--port=")) value = arg.slice("--port=".length);
    else if (arg === "-h" || arg === "--help") {
      process.stdout.write("usage: node http_agent.mjs [--port N]   (0 = any free port)\n");
      process.exit(0);
    } else {
      process.stderr.write(`http_agent: unknown argument '${arg}'; usage: node http_agent.mjs [--port N]\n`);
      process.exit(2);
    }
    port = Number(value);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      process.stderr.write(`http_agent: --port must be an integer 0-65535. Got '${value}'.\n`);
      process.exit(2);
    }
  }
  return port;
}

function stop() {
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);

server.listen(parsePort(process.argv.slice(2)), "127.0.0.1", () => {
  const { port } = server.address();
  process.stdout.write(`listening on http://127.0.0.1:${port}/agent\n`);
});

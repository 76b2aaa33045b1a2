#!/usr/bin/env bash
# `make tour`: every station of casework on the bundled example projects, in scratch copies
# (build/tour) so the committed examples stay as they are. Every step is one casework command a user
# would type. `make demo` (scripts/demo.sh) is the short first look: the main job only.
set -euo pipefail
# The scratch copy (build/tour/refunds), the demo key, a git repository, `step` and `fails`.
source "$(dirname "$0")/_scratch.sh" tour

# --- 1. Versioned datasets ------------------------------------------------------------------
step "Release the example dataset as version 1" casework dataset release refunds -m "example as shipped"
fails "Check it: two mined rows are past their retention date" casework dataset check refunds
step "Expire them: the first change after retain_until removes them" casework dataset expire
step "Check again, with the residual-PII scan CI runs" casework dataset check refunds --pii
commit "release, expire"

# --- 2. Synthetic variants that know whether they keep their label ----------------------------
step "Variants: paraphrases keep the label, dropped identifiers go back to labelling" \
  casework synth refunds -t paraphrase -t drop_identifier --slice refunds --limit 8
commit "synth"

# --- 3. Mining production traces, scrubbed before anything touches disk -------------------------
step "Mine failing conversations into scrubbed, unlabelled drafts" \
  casework mine traces --dataset refunds --slice refunds --failing-only -m "mined failing conversations"
step "The drafts wait for labels" casework dataset cases refunds --unlabelled
commit "mined"

# --- 4. Agreement per slice, then blind double labelling and adjudication ---------------------
step "Agreement per slice: refunds is ambiguous and may not gate" casework agreement refunds
step "Assign the queue (drafts) and the open disagreements" \
  casework label assign refunds --labellers lab-03,lab-07,lab-02
rm -rf sheets adjudication
step "Blind sheets: the situation and the declared tools, nothing else" casework label export refunds --out sheets
step "Disagreements join the review queue" casework review sync refunds
step "Adjudication sheets: the disagreeing labels, anonymised" \
  casework review export --kind disagreement --dataset refunds --out adjudication
step "(stand-in for the people who fill the sheets in)" python3 demo/simulated_labellers.py sheets
python3 demo/simulated_labellers.py adjudication >/dev/null
step "Import the labels (validated; all or nothing)" casework label import sheets/*.labels.jsonl
step "Import the adjudications (decisions of the review queue)" casework review import adjudication/*.adjudication.jsonl
step "Apply the decided work (labels, adjudications) as a new version" \
  casework dataset apply refunds -m "November labels and adjudications"
commit "labels"
# The disagreement clusters above (backordered items, orders older than about 30 days) are the
# guideline gap: a rule settles it, and only the rows it touches go back to labelling.
rule="situation.fixtures[?tool=='get_order'].response[] | [?status=='partially_shipped' && age_days > \`30\`]"
step "The guideline gap gets a rule: preview the rows it touches (count and sample)" \
  casework label guideline bump refunds -m "older than 30 days and partially shipped: escalate" \
  --relabel-where "$rule" --dry-run
step "Bump the guideline to refunds-g8; the rule is stored with the version" \
  casework label guideline bump refunds -m "older than 30 days and partially shipped: escalate" \
  --relabel-where "$rule"
step "Rows labelled under an older rule" casework dataset cases refunds --labelled-under refunds-g6
step "Send them back: refunds-g7 came without a rule, so every refunds-g6 row goes back" \
  casework label assign refunds --relabel-under refunds-g6 --labellers lab-03,lab-07,lab-02
step "Send back only the refunds-g7 rows the refunds-g8 rule touches, not the whole slice" \
  casework label assign refunds --relabel-under refunds-g7 --labellers lab-03,lab-07,lab-02
rm -rf relabel
step "Their sheets say which rule sent each row back" casework label export refunds --out relabel
python3 demo/simulated_labellers.py relabel >/dev/null
casework label import relabel/*.labels.jsonl >/dev/null
step "Relabelled rows become the next version" casework dataset apply refunds -m "relabel under refunds-g8: the refunds-g6 rows and the rows the rule touches"
step "Agreement: refunds-g8 agrees where refunds-g7 was ambiguous" casework agreement refunds
commit "relabel"

# --- 5. Leakage: near-duplicates across splits, rows copied into the prompt -------------------
fails "Scan holdout against dev: planted near-duplicates are flagged, not deleted" casework leakage scan refunds
step "Flagged pairs join the review queue" casework review sync refunds
step "Review: short template-like pairs stay, incident copies move to dev" python3 - <<'PY'
import json, subprocess
items = json.loads(subprocess.run(
    ["casework", "review", "list", "--kind", "leakage-pair", "--dataset", "refunds",
     "--status", "open", "--format", "json"], check=True, capture_output=True, text=True).stdout)
for item in items:
    pair = item["payload"]
    if pair["jaccard"] >= 0.99:  # short, common intents are supposed to look alike
        decision = "template"
    else:  # two rows mined from one incident: the holdout copy moves to dev
        decision = "move-left" if pair["left"]["split"] == "holdout" else "move-right"
    subprocess.run(["casework", "review", "decide", str(item["id"]), decision,
                    "--reviewer", "rev-01"], check=True)
PY
step "Apply the decisions as a new version" casework dataset apply refunds -m "leakage decisions"
step "Scan again: nothing left to review" casework leakage scan refunds
fails "A case copied into the few-shot examples has become a test of memory" casework leakage prompt refunds
commit "leakage"

# --- 6. A tool refactor is a dataset migration ------------------------------------------------
python3 - <<'PY'
import json, pathlib
p = pathlib.Path("agent/tools.json")
tools = json.loads(p.read_text())
for t in tools:
    if t["name"] == "lookup_customer":
        t["name"] = "find_customer"
p.write_text(json.dumps(tools, indent=2) + "\n")
PY
printf '[tools]\nlookup_customer = "find_customer"\n' > renames.toml
fails "The agent renamed lookup_customer: every row naming it is now wrong" bash -c 'casework dataset check refunds 2>&1 | tail -n 3; exit ${PIPESTATUS[0]}'
step "Migrate the dataset with the rename map" casework dataset migrate refunds -m "lookup_customer is find_customer now"
step "Check passes again" casework dataset check refunds
commit "migrate"

# --- 7. The judge: its verdicts count once people have checked its verdicts ------------------
# The example's judge is a keyword stand-in (examples/refunds/llm/judge.py); point [models.judge]
# at a real model to do this for real. See docs/judge.md.
run_id() { sed -n 's/^run \([^:]*\):.*/\1/p' | head -n 1; }
step "The judge as a labeller: informative, it makes no verdict count" casework judge labeller-check --slice account
step "Calibration runs (seed 11, not the runs gated below): the judge grades both agents' replies" \
  bash -c 'casework run refunds --agent python:agents.refunds_agent:good -k 3 --seed 11 | tee run-cal-good.txt
           casework run refunds --agent python:agents.refunds_agent:degraded -k 3 --seed 11 | tee run-cal-bad.txt'
cal_good=$(run_id < run-cal-good.txt); cal_bad=$(run_id < run-cal-bad.txt)
step "A trial read while tuning the judge's prompt is listed, so it is never sampled" \
  casework judge tune add "$cal_good/status-002/0"
rm -rf verdict-sheets
step "Blind verdict sheets: 240 judge verdicts, stratified by slice and the judge's verdict, 20% to two people" \
  casework judge sample "$cal_good" "$cal_bad" -n 240 --reviewers rev-01,rev-02 --out verdict-sheets
step "(stand-in for the people who grade the replies)" python3 demo/simulated_reviewers.py verdict-sheets
step "Import their verdicts (all or nothing) and their agreement on the shared items" \
  casework review import verdict-sheets/verdicts-rev-01.jsonl verdict-sheets/verdicts-rev-02.jsonl
step "Certify: TPR and TNR lower bounds must reach 0.80 at 95%, counting reviewed cases, not trials (too few failing cases here: no slice yet)" \
  casework judge certify
commit "judge certified"

# --- 8. Runs, pass^k, discrimination, the gate and the report (retirement: end of step 13) -----
# The judge agreed with people on every account and order_status reply, but on too few failing
# cases: its verdicts do not count yet, so the gate below fails closed and says why.
step "Run the good agent, k=3 trials per case" bash -c 'casework run refunds --agent python:agents.refunds_agent:good -k 3 --seed 7 | tee run-good.txt'
step "Run the deliberately degraded agent" bash -c 'casework run refunds --agent python:agents.refunds_agent:degraded -k 3 --seed 7 | tee run-bad.txt'
good=$(run_id < run-good.txt); bad=$(run_id < run-bad.txt)
step "pass@1 and pass^k per slice, real vs synthetic, stability" casework results show "$good"
step "Does the dataset separate a known-better agent from a known-worse one?" casework results compare "$good" "$bad"
fails "The release gate: paired against the degraded agent, but the judge's verdicts are not admissible yet" casework gate --run "$good" --baseline "$bad"
step "The report" casework report "$good" --vs "$bad" --out report.html
commit "runs"

# --- 9. When2Call-style cases: the offered tools are the situation; a simulated user -------------
# A second, small project (examples/when2call): each case offers its own tools (situation.tools or
# a pinned tools_file), the right outcome is resolve, clarify or refuse (one case accepts refuse
# or escalate), facts are checked without a judge, and one case is a conversation with a
# simulated user played by [models.user] (an offline stand-in here). See docs/agents.md.
w2c="$root/build/tour/when2call"
rm -rf "$w2c"
cp -r "$root/examples/when2call" "$w2c"
rm -rf "$w2c/.casework" "$w2c/runs"
cd "$w2c"
git init -q .
commit "when2call example"
step "Check: every label and fixture names a tool its own case offers" casework dataset check when2call
step "Release it" casework dataset release when2call -m "When2Call-style slice"
step "Run the agent that asks and refuses when it should, k=3" \
  bash -c 'casework run when2call --agent python:agents.when2call_agent:agent -k 3 --seed 7 | tee run-w2c.txt'
step "Run the eager agent that never asks and claims what it has no tool for" \
  bash -c 'casework run when2call --agent python:agents.when2call_agent:eager -k 3 --seed 7 | tee run-w2c-eager.txt'
w2c_good=$(run_id < run-w2c.txt); w2c_bad=$(run_id < run-w2c-eager.txt)
step "pass^k as for any case (the simulated conversation included)" casework results show "$w2c_good"
step "The slice separates the two agents" casework results compare "$w2c_good" "$w2c_bad"
cd "$work"
# --- end 9 ---------------------------------------------------------------------------------------
# --- 10. Tool environments: a τ²-style airline task set on one shared state (issue 16) ----------
# A second, small project: computing tools over states/airline.json, golden actions as the oracle.
bookings="$root/build/tour/bookings"
rm -rf "$bookings"
cp -r "$root/examples/bookings" "$bookings"
rm -rf "$bookings/.casework" "$bookings/runs"
(
  cd "$bookings"
  git init -q .
  commit "bookings example"
  step "Check it: state refs pinned by sha256, patches apply, golden actions call declared tools" casework dataset check bookings
  step "Run the careful agent in the environment, k=4 (a fresh state copy per trial)" bash -c 'casework run bookings -k 4 --seed 7 | tee run-good.txt'
  step "Run the sloppy one: a wrong booking fails the golden-state oracle" bash -c 'casework run bookings --agent python:agents.bookings_agent:sloppy -k 4 --seed 7 | tee run-bad.txt'
  step "pass^k of both, side by side" casework results compare "$(run_id < run-good.txt)" "$(run_id < run-bad.txt)"
)
# --- end of step 10 --------------------------------------------------------------------------
# --- 11. Label in the browser (web app) -------------------------------------------------------
# A separate scratch copy, so the steps above stay as they are. The server runs briefly on a free
# loopback port; a labeller signs in with the printed link and one label goes through it by HTTP.
web="$root/build/tour/web"
mkdir -p "$(dirname "$web")" && rm -rf "$web" && cp -r "$root/examples/refunds" "$web" && rm -rf "$web/.casework" "$web/runs"
(
  cd "$web"
  git init -q . && commit "example project"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  step "Assign the queue" casework label assign refunds --labellers lab-03,lab-07
  link=$(casework serve users add lab-03 --role labeller --port "$port" | tail -n 1)
  echo "one-time sign-in link: $link"
  casework serve --port "$port" & server=$!
  trap 'kill "$server" 2>/dev/null || true' EXIT
  # Readiness is probed over HTTP until the server answers (or exits), up to 180 s: under load it
  # has taken 9.5 s to start, so no fixed wait is long enough.
  step "Wait for the server, sign in with the link and store one label over HTTP" \
    python3 "$root/scripts/web_demo.py" "$link" "$server"
  step "The web label is a label like any other" casework label status refunds
  fresh=$(casework serve users link lab-03 --port "$port" | tail -n 1)
  kill "$server" && wait "$server" 2>/dev/null || true
  trap - EXIT
  echo
  echo "web app: cd build/tour/web && casework serve --port $port   # then open $fresh"
  echo "         (xdg-open \"$fresh\" opens it in your browser)"
)
# --- 12. Failure shapes from production traces, and drift between two weeks (issue 15) ----------
# >>> shapes (delimited: the authoring steps build on these)
step "Generate two weeks of traces with 15 planted failure shapes (week 2: one new, one gone)" bash -c \
  'python3 traces-gen/generate.py --seed 7 --week 1 -n 3000 --out traces-gen/week1/traces.jsonl &&
   python3 traces-gen/generate.py --seed 7 --week 2 -n 3000 --out traces-gen/week2/traces.jsonl'
step "Cluster week 1's failing conversations (scrubbed as mine does) into named shapes" \
  casework shapes build traces-gen/week1 --name refunds -m "week 1"
step "The saved shape sets" casework shapes list
step "One shape and its most central conversations" casework shapes show refunds shape-01
fails "Drift: week 2 against week 1's shapes (exit 1: one appeared, one vanished)" \
  casework shapes drift traces-gen/week2 --against refunds
commit "shapes"
# <<< shapes
# --- 13. Cases along named axes, review, and the generator's own gate (issue 15 part 2) --------
# >>> author (delimited: builds on the shapes above; scripted replies in llm/responses.jsonl, written
# by llm/author_replies.py; some are planted to break one rejection rule each)
author_axes() {
  for pair in shape-03:missing-or-malformed-input shape-03:two-defensible-readings \
    shape-03:mid-task-goal-change shape-04:stale-tool-state shape-03:adversarial-retrieved-content \
    shape-01:permission-absent shape-01:referent-absent shape-12:contradictory \
    shape-03:outside-policy shape-03:underdetermined; do
    echo "\$ casework shapes author --shape ${pair%%:*} --axis ${pair#*:} -n 2"
    casework shapes author --shape "${pair%%:*}" --axis "${pair#*:}" -n 2
  done
}
step "Author two candidates per axis: the rules reject (and count) what breaks them, the rest wait for review" author_axes
step "The candidates waiting for review" casework review list --kind generated-case --status open
step "Review them from a decision file: accept, edit, reject with a reason (seconds on screen kept)" \
  casework review decide --decisions demo/author_decisions.jsonl
step "Mark the refunds slice mature: its unsatisfiable share must stay in 20–25%" \
  sed -i 's/^synthetic_cap = 0.25$/synthetic_cap = 0.25\nmature_slices = ["refunds"]/' casework.toml
fails "Check: the unsatisfiable share per slice; refunds (with the variants and drafts) is below the band" \
  casework dataset check refunds
author_second_round() {
  for pair in shape-06:permission-absent shape-06:outside-policy shape-05:underdetermined; do
    echo "\$ casework shapes author --shape ${pair%%:*} --axis ${pair#*:} -n 1"
    casework shapes author --shape "${pair%%:*}" --axis "${pair#*:}" -n 1
  done
}
step "Author a second round on unsatisfiable axes" author_second_round
step "Review it from a second decision file" casework review decide --decisions demo/author_decisions_2.jsonl
step "Check again: refunds is inside the band" casework dataset check refunds
step "The generator's gate: acceptance, rejections, minutes per case, discrimination, coverage" \
  casework shapes report --better python:agents.refunds_agent:good --worse python:agents.refunds_agent:degraded
commit "authored cases"
# <<< author
# Retirement waits until here: retired (smoke) cases leave the population that the unsatisfiable
# band and the synthetic cap are measured on, so retiring before step 13 would leave the mature
# refunds slice too small to reach its band. Retirement compares runs of the current cases, so both
# agents run once more on the release that now holds the authored cases.
step "Release the reviewed, authored cases" casework dataset apply refunds -m "authored cases, reviewed"
step "Run both agents on the current release, k=3, to see which cases separate them" bash -c \
  'casework run refunds --agent python:agents.refunds_agent:good -k 3 --seed 7 | tee run-good-2.txt &&
   casework run refunds --agent python:agents.refunds_agent:degraded -k 3 --seed 7 | tee run-bad-2.txt'
good=$(run_id < run-good-2.txt); bad=$(run_id < run-bad-2.txt)
step "Retire cases that separate nothing (to the smoke split, as a new version)" casework dataset retire refunds --runs "$good" --runs "$bad"
fails "The runs are now on an older release: the gate refuses them" casework gate --run "$good"
commit "retired"
step "Release log" casework dataset versions refunds

# --- 14. Interop: a τ²-style domain in, a Java agent end to end (issue 17) ----------------------
# >>> interop2
interop="$root/build/tour/interop"
rm -rf "$interop" && mkdir -p "$interop"
cp -r "$root/examples/java-agent/." "$interop"
rm -rf "$interop/build" "$interop/runs" "$interop/.casework"
cp -r "$root/tests/interop/data/tau2/airline" "$interop/airline"
(
  cd "$interop"
  git init -q . && commit "java agent example"
  step "A τ²-style domain (tasks, split file, db.json, tools.py read statically) as one slice" \
    casework import tau2 airline --dataset airline
  if command -v javac >/dev/null; then
    step "Compile the Java agent (standard library only)" javac -d build src/CaseworkAgent.java
    step "Its tools come from the agent itself: tools_from = \"cmd:java … --tools\"" casework dataset check orders
    # Ready when it says so: the agent prints its URL once it listens (or its pipe closes if it
    # dies), so the tour reads that line instead of guessing how long a JVM takes to start.
    coproc java_agent { exec java -cp build CaseworkAgent --port 0; }
    agent=$java_agent_PID
    trap 'kill "$agent" 2>/dev/null || true' EXIT
    IFS= read -r -t 180 ready <&"${java_agent[0]}" || { echo "the Java agent did not start"; exit 1; }
    url=${ready#listening on }
    step "Run it over HTTP, k=2" bash -c "casework run orders --agent $url -k 2 --no-judge | tee run-java.txt"
    step "Verdicts out for any CI: JUnit XML" casework export junit "$(run_id < run-java.txt)" -o junit.xml
    kill "$agent" && wait "$agent" 2>/dev/null || true
    trap - EXIT
  else
    echo "(javac not installed: the Java agent steps are skipped; apt-get install default-jdk-headless)"
  fi
)
# <<< interop2

echo
echo "tour finished in ${SECONDS} s: scratch projects in build/tour/refunds, build/tour/when2call, build/tour/bookings, build/tour/web and build/tour/interop; report: build/tour/refunds/report.html"

#!/usr/bin/env bash
# `make demo`: a first look at the main job on the bundled example project — release, blind labels,
# agreement, leakage, two agents run, the gate, the report — in a scratch copy (build/demo) so the
# committed example stays as it is. Every step is one casework command a user would type.
# `make tour` (scripts/tour.sh) runs every other station too.
set -euo pipefail
# The scratch copy (build/demo/refunds), the demo key, a git repository, `step` and `fails`.
source "$(dirname "$0")/_scratch.sh" demo

# --- 1. A release: the content hash every run and score pins ----------------------------------
step "Release the example dataset as version 1" casework dataset release refunds -m "example as shipped"
# Retention is judged against today, as the gate judges it: expiring first keeps the gate's answer
# below the same on any date (whatever has passed its retain_until by then leaves here).
step "Expire rows past their retention date (a release may not keep them)" casework dataset expire

# --- 2. Blind double labelling and adjudication ------------------------------------------------
step "Assign the unlabelled rows and the open disagreements" \
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
  casework dataset apply refunds -m "labels and adjudications"
commit "labels"

# --- 3. Agreement per slice: a slice whose guideline is ambiguous may not gate ------------------
step "Agreement per slice: refunds is ambiguous (kappa below 0.6) and may not gate" casework agreement refunds

# --- 4. Leakage: near-duplicates across splits are flagged, reviewed, never deleted ------------
fails "Scan holdout against dev: planted near-duplicates are flagged" casework leakage scan refunds
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
commit "leakage"

# --- 5. Two agents, k trials per case, the gate and the report ---------------------------------
run_id() { sed -n 's/^run \([^:]*\):.*/\1/p' | head -n 1; }
step "Run the good agent, k=3 trials per case" \
  bash -c 'casework run refunds --agent python:agents.refunds_agent:good -k 3 --seed 7 | tee run-good.txt'
step "Run the deliberately degraded agent, same cases and seed" \
  bash -c 'casework run refunds --agent python:agents.refunds_agent:degraded -k 3 --seed 7 | tee run-bad.txt'
good=$(run_id < run-good.txt); bad=$(run_id < run-bad.txt)
step "pass@1 and pass^k per slice, real vs synthetic, stability" casework results show "$good"
# The example's judge is a keyword stand-in whose verdicts count only where people have certified
# it (docs/judge.md); certifying it is part of `make tour`, so here the gate says no.
fails "The release gate fails closed: the judge decides account and order_status rows and is not certified yet" \
  casework gate --run "$good" --baseline "$bad"
step "The report: both runs side by side, per slice, with charts" casework report "$good" --vs "$bad" --out report.html
commit "runs"

echo
echo "demo finished in ${SECONDS} s; report: $work/report.html"
echo "make tour runs every other station: the residual-PII check, synthetic variants, mining, relabelling"
echo "under a new guideline, prompt leakage, a tool rename as a migration, judge certification on people's"
echo "verdicts (counted by case, so this small sample does not yet make it admissible), retirement, two more"
echo "example projects, the web app, failure shapes, authoring and interop."

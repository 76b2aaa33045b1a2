"""Build the example dataset `datasets/refunds/` (cases.jsonl and labels.jsonl) from templates.

Usage: ``python build/make_dataset.py [--out FOLDER]`` (default: this project's dataset folder).
Deterministic: the same code writes byte-identical files. The story it tells, step by step:

1. Hand-written scenario templates (listed in `scenarios.py`: `refunds_*.py`, `status_*.py`,
   `account_*.py`) draw invented customers and orders (`world.py`), and word each case from
   several phrasings (`core.py`).
2. Each case is mined (production, then scrubbed with keyed pseudonyms: `scrub.py`) or hand-written;
   splits are stratified per scenario, about 70% dev and 30% holdout.
3. Leakage plants (`plants.py`): near-duplicate incidents across the split, template-like pairs,
   one case copied into `agent/few_shot.md`. Any other cross-split pair that comes out too alike is
   reworded until it is not.
4. Synthetic variants of some seeds (`transforms.py`), at most a quarter of each slice.
5. Labelling history (`history.py`): blind double labels, disagreements, adjudications.
6. Checks (`checks.py`), then canonical writing through `casework.dataset.jsonl`.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from checks import cross_split_pairs, jaccard, shingles, verify
from core import Draft, Facts, Say, Scenario
from history import PLANS, Row, label_slice
from plants import INCIDENTS, PROMPT_COPY, TEMPLATE_PAIRS
from scenarios import SCENARIOS
from scrub import FINGERPRINT, SCRUB_VERSION, Scrub, pseudo
from transforms import GENERATORS, has_identifier, transform_turns
from world import World

from casework.dataset import label_sort_key, write_cases, write_records
from casework.schema import Case, Label, LabelRecord, Provenance, ScrubInfo, Situation

SEED = 20261130
PROJECT = Path(__file__).resolve().parent.parent
#: "Today" for the example: rows whose retain_until is before it have expired.
TODAY = date(2026, 11, 30)
RETENTION_DAYS = 365
ID_PREFIX = {"refunds": "refunds", "order_status": "status", "account": "account"}
SYNTHETIC = {"refunds": 14, "order_status": 9, "account": 8}
TRANSFORM_CYCLE = [
    "paraphrase",
    "typos",
    "informal_register",
    "paraphrase",
    "noise_detail",
    "drop_identifier",
]
SHAPES = {
    "partial_old": "backordered-item-limbo",
    "lost_parcel": "lost-parcel-no-claim",
    "delivered_not_found": "delivered-not-received",
    "duplicate_charge": "double-charge",
    "incident_cracked_batch": "depot-damage-wave",
    "incident_double_charge": "checkout-timeout-double-charge",
    "incident_flooded_depot": "depot-closure-delays",
    "incident_reset_outage": "reset-email-outage",
}
#: Unplanted cross-split pairs must stay below this Jaccard (the scan flags at 0.8).
REWORD_ABOVE = 0.65
#: A variant this close to its seed changed nothing worth keeping.
VARIANT_MAX_JACCARD = 0.9


@dataclass
class Entry:
    """One case on its way through the build."""

    scenario: Scenario
    facts: Facts
    source: str
    index: int
    split: str = "dev"
    plant: str | None = None
    attempt: int = 0
    draft: Draft | None = None
    case_id: str = ""
    drafted_at: datetime = datetime(2026, 1, 1, tzinfo=UTC)
    frozen: bool = False
    provenance: dict[str, Any] = field(default_factory=dict)
    parent: Entry | None = None
    transform: str | None = None
    case: Case | None = None

    @property
    def scrub(self) -> Scrub | None:
        """The pseudonymisation of mined rows (and of variants of mined rows)."""
        root = self.parent or self
        return Scrub.of(root.facts) if root.source == "mined" else None


def words(entry: Entry) -> Say:
    """The phrasing generator of an entry: its own seed, so rewording one case moves no other."""
    key = f"{SEED}:{entry.scenario.slice}:{entry.scenario.name}:{entry.index}:{entry.transform}:{entry.attempt}"
    root = entry.parent or entry
    return Say(random.Random(key), casual=root.source == "mined")


def render(entry: Entry) -> Draft:
    """The entry's draft in its current wording."""
    if entry.parent is None or entry.transform == "paraphrase":
        return entry.scenario.write(entry.facts, words(entry))
    assert entry.parent.draft is not None and entry.transform is not None
    d = entry.parent.draft
    turns = transform_turns(
        d.turns, entry.transform, random.Random(f"{SEED}:{entry.index}:{entry.attempt}")
    )
    return Draft(
        d.goal,
        turns,
        d.state,
        d.fixtures,
        d.label,
        d.alt_label,
        d.oracle,
        d.satisfiable,
        d.unsatisfiable_kind,
        d.injected,
        d.ambiguous,
    )


def build_case(entry: Entry) -> Case:
    """The released case (label filled in later by the labelling history)."""
    entry.draft = render(entry) if entry.scrub is None else _scrubbed(render(entry), entry.scrub)
    d = entry.draft
    situation = Situation(
        goal=d.goal, turns=d.turns, fixtures=d.fixtures, state=d.state, injected=d.injected
    )
    provenance = dict(entry.provenance)
    if d.unsatisfiable_kind and entry.transform != "drop_identifier":
        provenance["unsatisfiable_kind"] = d.unsatisfiable_kind
    if entry.source == "mined":
        scrub = entry.scrub
        assert scrub is not None
        provenance["subjects"] = scrub.subjects(situation.model_dump(mode="json"))
    labelled = entry.transform != "drop_identifier"
    return Case.model_validate(
        {
            "id": entry.case_id,
            "slice": entry.scenario.slice,
            "split": entry.split,
            "frozen": entry.frozen,
            "source": entry.source,
            "satisfiable": d.satisfiable or not labelled,
            "situation": situation,
            "oracle": d.oracle,
            "provenance": Provenance.model_validate(provenance),
        }
    )


def _scrubbed(d: Draft, scrub: Scrub) -> Draft:
    def s(model: Any) -> Any:
        return type(model).model_validate(scrub.json(model.model_dump(mode="json", by_alias=True)))

    return Draft(
        scrub.text(d.goal),
        [s(t) for t in d.turns],
        scrub.json(d.state),
        [s(f) for f in d.fixtures],
        s(d.label),
        s(d.alt_label),
        s(d.oracle),
        d.satisfiable,
        d.unsatisfiable_kind,
        [s(i) for i in d.injected],
        d.ambiguous,
    )


# ---------------------------------------------------------------------------------------------
# Steps


def draw_entries(rng: random.Random, world: World) -> list[Entry]:
    """Base cases of every scenario, with stratified splits, plus the leakage plants."""
    copy = Entry(
        PROMPT_COPY, PROMPT_COPY.facts(world), "hand", 0, split="holdout", plant="prompt_copy"
    )
    entries: list[Entry] = [copy]
    for scenario in SCENARIOS:
        group = []
        for i in range(scenario.count):
            source = "mined" if rng.random() < scenario.mined_share else "hand"
            group.append(Entry(scenario, scenario.facts(world), source, i))
        rng.shuffle(group)
        for entry in group[: round(len(group) * 0.3)]:
            entry.split = "holdout"
        entries += group
    for scenario in INCIDENTS + TEMPLATE_PAIRS:
        kind = "incident" if scenario in INCIDENTS else "template"
        for i, split in enumerate(("dev", "holdout")):
            facts = scenario.facts(world)
            if kind == "template":
                facts.extra["pick"] = facts.extra["text"][i]
            entries.append(
                Entry(scenario, facts, "mined", i, split=split, plant=f"{kind}:{scenario.name}")
            )
    return entries


def assign_ids_and_times(entries: list[Entry], rng: random.Random) -> None:
    """Ids per slice in a shuffled order; when each row was mined or written."""
    for slice_name, prefix in ID_PREFIX.items():
        group = [e for e in entries if e.scenario.slice == slice_name]
        rng.shuffle(group)
        for n, entry in enumerate(group, start=1):
            entry.case_id = f"{prefix}-{n:03d}"
    start_mined = datetime(2025, 12, 1, 9, tzinfo=UTC)
    start_hand = datetime(2026, 1, 5, 9, tzinfo=UTC)
    for entry in entries:
        if entry.source == "mined":
            entry.drafted_at = start_mined + timedelta(minutes=rng.randint(0, 334 * 24 * 60))
        else:
            entry.drafted_at = start_hand + timedelta(minutes=rng.randint(0, 265 * 24 * 60))
    # Two production rows from before December 2025: their retention has run out (`casework dataset expire`).
    old = sorted(
        (
            e
            for e in entries
            if e.source == "mined" and e.plant is None and e.scenario.slice != "refunds"
        ),
        key=lambda e: e.case_id,
    )
    for entry, when in zip(
        rng.sample(old, 2), ("2025-10-17T14:32:00+00:00", "2025-11-08T08:05:00+00:00"), strict=True
    ):
        entry.drafted_at = datetime.fromisoformat(when)
    # The holdout twin of an incident was mined a few weeks after the dev twin.
    twins: dict[str, list[Entry]] = {}
    for entry in entries:
        if entry.plant and entry.plant.startswith("incident"):
            twins.setdefault(entry.plant, []).append(entry)
    for dev_twin, holdout_twin in twins.values():
        holdout_twin.drafted_at = dev_twin.drafted_at + timedelta(
            days=rng.randint(18, 40), minutes=rng.randint(0, 900)
        )


def base_provenance(entry: Entry, rng: random.Random) -> None:
    """Supply-chain fields that do not depend on the wording."""
    p: dict[str, Any] = {}
    shape = SHAPES.get(entry.scenario.name)
    if entry.source == "mined":
        trace = f"{rng.getrandbits(128):032x}"
        session = f"{rng.getrandbits(64):016x}"
        p.update(
            source_trace=pseudo("trace", trace),
            source_session=pseudo("session", session),
            mined_at=entry.drafted_at,
            retain_until=(entry.drafted_at + timedelta(days=RETENTION_DAYS)).date(),
            scrub=ScrubInfo(version=SCRUB_VERSION, key_fingerprint=FINGERPRINT),
        )
        if shape:
            p["shape"] = shape
    else:
        p.update(
            reviewer="lab-05",
            reviewed_at=entry.drafted_at + timedelta(days=1, hours=rng.randint(0, 6)),
        )
    entry.provenance = p


def choose_frozen(entries: list[Entry], rng: random.Random) -> None:
    """A few hand-written holdout cases form the private slice."""
    for slice_name, n in (("refunds", 2), ("order_status", 1), ("account", 1)):
        pool = sorted(
            (
                e
                for e in entries
                if e.scenario.slice == slice_name
                and e.source == "hand"
                and e.split == "holdout"
                and e.plant is None
            ),
            key=lambda e: e.case_id,
        )
        for entry in rng.sample(pool, n):
            entry.frozen = True


def add_variants(entries: list[Entry], rng: random.Random) -> list[Entry]:
    """Synthetic variants: label-preserving ones, and one information-changing one per slice."""
    expired = {
        e.case_id for e in entries if e.drafted_at.date() < TODAY - timedelta(days=RETENTION_DAYS)
    }
    variants: list[Entry] = []
    for slice_name, n in SYNTHETIC.items():
        pool = sorted(
            (
                e
                for e in entries
                if e.scenario.slice == slice_name
                and e.plant is None
                and not e.frozen
                and e.case_id not in expired
                and not (e.draft and e.draft.ambiguous)
            ),
            key=lambda e: e.case_id,
        )
        for k, parent in enumerate(rng.sample(pool, n)):
            transform = TRANSFORM_CYCLE[k % len(TRANSFORM_CYCLE)]
            assert parent.case is not None
            if transform == "drop_identifier" and not has_identifier(
                parent.case.situation.user_text()
            ):
                transform = "paraphrase"
            child = Entry(
                parent.scenario,
                parent.facts,
                "synthetic",
                1000 + k,
                split=parent.split,
                parent=parent,
                transform=transform,
            )
            child.case_id = f"{parent.case_id}~{transform}"
            child.drafted_at = datetime(2026, 10, 5, 10, tzinfo=UTC) + timedelta(
                minutes=rng.randint(0, 40 * 24 * 60)
            )
            child.provenance = {
                "parent_id": parent.case_id,
                "transform": transform,
                "generator": GENERATORS[transform],
            }
            if parent.source == "mined":
                # Derived from personal data: the same subjects and retention as the seed.
                child.provenance.update(
                    subjects=list(parent.case.provenance.subjects),
                    retain_until=parent.provenance["retain_until"],
                )
            variants.append(child)
    return variants


def build_variant(entry: Entry) -> None:
    """Build a variant, rewording it until it really differs from its seed (as `casework synth` demands)."""
    assert entry.parent is not None and entry.parent.case is not None
    seed = shingles(entry.parent.case.situation.user_text())
    for _ in range(20):
        entry.case = build_case(entry)
        if jaccard(seed, shingles(entry.case.situation.user_text())) < VARIANT_MAX_JACCARD:
            return
        entry.attempt += 1
    raise SystemExit(f"{entry.case_id}: no wording differs enough from the seed")


def reword_collisions(entries: list[Entry]) -> None:
    """Reword unplanted cross-split pairs that came out too alike (the scan would flag them)."""
    planted = {e.case_id: e.plant for e in entries if e.plant}
    for _ in range(100):
        cases = [e.case for e in entries if e.case is not None]
        hits = [
            (a, b)
            for a, b, _ in cross_split_pairs(cases, REWORD_ABOVE)
            if not (a in planted and planted[a] == planted.get(b))
        ]
        if not hits:
            return
        by_id = {e.case_id: e for e in entries}
        for dev_id, holdout_id in hits:
            a, b = by_id[dev_id], by_id[holdout_id]
            # Reword a variant if one is involved, else the holdout row (unless it is a plant).
            target = b if b.parent or not a.parent else a
            if target.case_id in planted:
                target = a
            target.attempt += 1
            if target.parent:
                build_variant(target)
                continue
            target.case = build_case(target)
            for child in entries:
                if child.parent is target:
                    build_variant(child)
    raise SystemExit("could not reword cross-split near-duplicates; add phrasings to the templates")


def labelled_rows(entries: list[Entry]) -> list[Row]:
    """Rows for the labelling history: every case except those waiting for their first label."""
    rows = []
    for e in entries:
        if e.transform == "drop_identifier":
            continue
        assert e.draft is not None
        truth = e.draft.label
        optional = (
            e.scenario.slice == "order_status"
            and "track_shipment" in {t.name for t in truth.required_tools}
            and "get_order" not in truth.tool_names()
        )
        rows.append(
            Row(
                e.case_id,
                e.scenario.slice,
                e.drafted_at,
                truth,
                e.draft.alt_label,
                e.draft.ambiguous,
                optional,
            )
        )
    return rows


# ---------------------------------------------------------------------------------------------


def build() -> tuple[list[Case], list[LabelRecord]]:
    """The whole example: cases with their final labels, and the raw label records."""
    rng = random.Random(SEED)
    world = World(random.Random(SEED + 1))
    entries = draw_entries(rng, world)
    assign_ids_and_times(entries, rng)
    for entry in entries:
        base_provenance(entry, rng)
    choose_frozen(entries, rng)
    for entry in entries:
        entry.case = build_case(entry)
    variants = add_variants(entries, rng)
    for entry in variants:
        build_variant(entry)
    entries += variants
    reword_collisions(entries)

    rows = labelled_rows(entries)
    for slice_name, plan in PLANS.items():
        label_slice(
            [r for r in rows if r.slice == slice_name],
            plan,
            random.Random(f"{SEED}:labels:{slice_name}"),
        )
    final: dict[str, Label] = {r.case_id: r.final for r in rows if r.final is not None}
    cases = []
    for entry in entries:
        assert entry.case is not None
        lab = final.get(entry.case_id)
        cases.append(entry.case.model_copy(update={"label": lab}) if lab else entry.case)
    cases = [Case.model_validate(c.model_dump(mode="json", by_alias=True)) for c in cases]
    labels = [r for row in rows for r in row.labels]
    problems = verify(
        cases,
        labels,
        prompt_files=[PROJECT / "agent/prompt.md", PROJECT / "agent/few_shot.md"],
        today=TODAY,
    )
    if problems:
        raise SystemExit("example dataset checks failed:\n  " + "\n  ".join(problems))
    return cases, labels


def main(argv: list[str] | None = None) -> int:
    """Write cases.jsonl and labels.jsonl into ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--out", type=Path, default=PROJECT / "datasets" / "refunds", help="folder to write into"
    )
    args = parser.parse_args(argv)
    cases, labels = build()
    args.out.mkdir(parents=True, exist_ok=True)
    write_cases(args.out / "cases.jsonl", cases)
    write_records(args.out / "labels.jsonl", labels, sort_key=label_sort_key)
    counts = Counter((c.slice, c.split) for c in cases)
    print(f"wrote {len(cases)} cases and {len(labels)} labels to {args.out}", file=sys.stderr)
    for (slice_name, split), n in sorted(counts.items()):
        print(f"  {slice_name:<13} {split:<8} {n}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

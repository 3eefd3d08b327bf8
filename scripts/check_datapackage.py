"""Issue 29 §2: every release is also a Frictionless Data Package, checked by tools nobody here
wrote.

1. The collector's package (`crates/server/tests/datapackage.rs` leaves a real release of the
   services in SERVICES_DIR: release.csv, manifest.json, datapackage.json, the survey's
   definition.json and raw.csv, the answers as the participants gave them): `frictionless
   validate` accepts it; every field's title, codebook, declared range and role is what
   definition.json says; and the contingency table of two labelled factors, computed from the
   released columns alone in pandas (a Categorical index of the labels) and in R
   (scripts/check_datapackage.R, jsonlite), equals `pd.crosstab` of the raw answers.
2. `orthomask pipeline` on a CSV (answers coded by `orthomask survey code`, with declared ranges
   and one kept column) writes a package frictionless validates, whose fields name the release's
   columns with their roles (kept, masked, QA) and the declared ranges, and whose 0/1 factors'
   table equals the coded raw data's, in pandas and in R.

    python scripts/check_datapackage.py ORTHOMASK_BIN SERVICES_DIR OUT_DIR
"""
import io
import json
import pathlib
import subprocess
import sys

import frictionless
import numpy as np
import pandas as pd

NO_ANSWER = "(no answer)"
HERE = pathlib.Path(__file__).resolve().parent


def fail(message):
    sys.exit(f"check_datapackage: {message}")


def validate(directory):
    report = frictionless.validate(str(directory / "datapackage.json"))
    if not report.valid:
        fail(f"frictionless rejects {directory / 'datapackage.json'}:\n{report.to_summary()}")
    return json.loads((directory / "datapackage.json").read_text())


def release_resource(package):
    return next(r for r in package["resources"] if r["path"] == "release.csv")


def labelled_table(directory, package, row, column):
    """The table of two factors from the released columns, in pandas: each level's indicator is
    its affine combination of released columns; the cross-products are the counts."""
    release = pd.read_csv(directory / "release.csv")
    factors = {f["name"]: f for f in release_resource(package)["orthomask:factors"]}

    def indicators(name):
        levels = factors[name]["levels"]
        z = pd.DataFrame({
            level["label"]: level["indicator"]["constant"] + sum(
                t["coefficient"] * release[t["column"]] for t in level["indicator"]["terms"])
            for level in levels
        })
        labels = [level["label"] for level in levels]
        return z[labels], pd.CategoricalIndex(labels, categories=labels, ordered=True, name=name)

    zr, row_index = indicators(row)
    zc, column_index = indicators(column)
    counts = zr.to_numpy().T @ zc.to_numpy()
    rounded = np.round(counts)
    if np.abs(counts - rounded).max() > 1e-6:
        fail(f"{directory}: the {row} × {column} cells are not counts: {counts}")
    return pd.DataFrame(rounded.astype(int), index=row_index, columns=column_index)


def r_table(directory, row, column):
    run = subprocess.run(["Rscript", str(HERE / "check_datapackage.R"), str(directory), row, column],
                         capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"R could not open {directory} with its labels:\n{run.stderr}")
    long = pd.read_csv(io.StringIO(run.stdout), dtype=str, keep_default_na=False)
    long["count"] = long["count"].astype(int)
    # R writes the table column by column, rows in its dimnames' order.
    return long.pivot(index="row", columns="column", values="count").reindex(
        index=pd.unique(long["row"]), columns=pd.unique(long["column"]))


def same_table(what, table, expected):
    """`table` (labels in the package's order) equals `expected` (counted from raw answers)."""
    expected = expected.reindex(index=list(table.index), columns=list(table.columns), fill_value=0)
    if list(map(str, table.index)) != list(map(str, expected.index)) or \
            not np.array_equal(table.to_numpy(), expected.to_numpy()):
        fail(f"{what}:\n{table}\nbut the raw answers give\n{expected}")
    print(f"{what}:\n{table}")


def check_services(directory):
    package = validate(directory)
    definition = json.loads((directory / "definition.json").read_text())
    fields = {f["name"]: f for f in release_resource(package)["schema"]["fields"]}
    header = list(pd.read_csv(directory / "release.csv", nrows=0).columns)
    if list(fields) != header:
        fail(f"the schema's fields {list(fields)} are not release.csv's columns {header}")
    for q in definition["questions"]:
        kind, label = q["kind"], q["label"]
        if kind == "categorical":
            for option in q["options"][1:]:
                f = fields[f"{q['id']}={option}"]
                if f["title"] != f"{label}: {option}" or f["orthomask:codebook"][0]["label"] != option:
                    fail(f"{q['id']}={option}: {f}")
            continue
        f = fields[q["id"]]
        if f["title"] != label:
            fail(f"{q['id']}: title {f['title']!r}, the definition says {label!r}")
        if f["orthomask:role"] != "masked":
            fail(f"{q['id']} is masked: its values are not codes, yet {f}")
        codebook = {c["value"]: c["label"] for c in f.get("orthomask:codebook", [])}
        if kind == "yes_no" and codebook != {1: "yes", 0: "no"}:
            fail(f"{q['id']}: codebook {codebook}")
        if kind == "likert" and (codebook[1], codebook[q["points"]]) != (q["low_label"], q["high_label"]):
            fail(f"{q['id']}: codebook {codebook}")
        if kind in ("integer", "number"):
            r = f["orthomask:declared_range"]
            if (r["minimum"], r["maximum"]) != (q["min"], q["max"]):
                fail(f"{q['id']}: range {r}, the definition says [{q['min']}, {q['max']}]")
    if any("categories" in f or "constraints" in f for f in fields.values()):
        fail("services: a masked field claims categories or constraints: its values are not codes")
    if fields["QA"]["orthomask:role"] != "qa":
        fail(f"QA: {fields['QA']}")
    # The oracle: the answers as given, skipped or hidden ones as "(no answer)".
    raw = pd.read_csv(directory / "raw.csv", dtype=str, keep_default_na=False).replace("", NO_ANSWER)
    expected = pd.crosstab(raw["smoker"], raw["exercise"])
    same_table("services, pandas: smoker × exercise from the release",
               labelled_table(directory, package, "smoker", "exercise"), expected)
    same_table("services, R: smoker × exercise from the release",
               r_table(directory, "smoker", "exercise"), expected)


def check_pipeline(binary, services, out):
    """Generated answers to the services' survey, coded by `orthomask survey code`, released by
    `orthomask pipeline` with declared ranges and `age` kept."""
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(29)
    n = 240
    smoker = rng.choice(["yes", "no", ""], size=n, p=[0.3, 0.6, 0.1])
    exercise = np.where(smoker == "no", rng.choice(["Never", "Sometimes", "Often"], size=n), "")
    answers = pd.DataFrame({"smoker": smoker, "exercise": exercise,
                            "mood": rng.integers(1, 4, size=n), "age": rng.integers(18, 91, size=n)})
    answers.to_csv(out / "answers.csv", index=False)
    coded = out / "coded.csv"
    for command in (
        [binary, "survey", "code", "--survey", str(services / "definition.json"),
         "--answers", str(out / "answers.csv"), "--out", str(coded)],
        [binary, "pipeline", "--input", str(coded), "--out-dir", str(out / "release"),
         "--teaching-key", "29", "--keep", "age", "--quiet",
         "--range", "age=18:90,mood=1:3"],
    ):
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode != 0:
            fail(f"{' '.join(command[1:3])} failed: {run.stderr.strip()}")
    directory = out / "release"
    package = validate(directory)
    fields = {f["name"]: f for f in release_resource(package)["schema"]["fields"]}
    raw = pd.read_csv(coded)
    if list(fields) != list(raw.columns) + ["QA"]:
        fail(f"pipeline: fields {list(fields)}, coded columns {list(raw.columns)} and QA")
    roles = {name: f["orthomask:role"] for name, f in fields.items()}
    want = {name: "masked" for name in raw.columns} | {"age": "kept", "QA": "qa"}
    if roles != want:
        fail(f"pipeline roles {roles}, expected {want}")
    for name, (lo, hi) in {"age": (18, 90), "mood": (1, 3)}.items():
        r = fields[name]["orthomask:declared_range"]
        if (r["minimum"], r["maximum"]) != (lo, hi):
            fail(f"pipeline: {name}'s declared range {r}, --range said [{lo}, {hi}]")
    # No release value is guaranteed to be a code or within a range, not even a kept one's
    # (frictionless found 17.999999999999574 for a kept age of 18): no categories, no constraints.
    if any("categories" in f or "constraints" in f for f in fields.values()):
        fail("pipeline: a field claims categories or constraints its released values break")
    expected = pd.crosstab(raw["smoker"].astype(int).astype(str),
                           raw["exercise=Often"].astype(int).astype(str))
    same_table("pipeline, pandas: smoker × exercise=Often from the release",
               labelled_table(directory, package, "smoker", "exercise=Often"), expected)
    same_table("pipeline, R: smoker × exercise=Often from the release",
               r_table(directory, "smoker", "exercise=Often"), expected)


def main(binary, services, out):
    services = pathlib.Path(services)
    if not (services / "datapackage.json").exists():
        fail(f"{services} holds no release: run `cargo test -p orthomask-server --test datapackage` first")
    check_services(services)
    check_pipeline(binary, services, pathlib.Path(out))
    print("data packages: the collector's and orthomask pipeline's validate and open with their labels")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])

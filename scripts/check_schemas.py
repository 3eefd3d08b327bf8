"""Validate every sample survey definition in www/surveys/, and the draft cases of
docs/draft-cases.json, against docs/survey.schema.json.

The Rust parser (orthomask_survey::definition, crates/survey/src/definition.rs) is the authority at run time; this check keeps the
published JSON Schema honest: every sample the project ships must satisfy it, and a few
deliberately broken variants must not.
"""
import copy
import json
import pathlib
import sys

import jsonschema

root = pathlib.Path(__file__).resolve().parent.parent
schema = json.loads((root / "docs" / "survey.schema.json").read_text())
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)

samples = sorted((root / "www" / "surveys").glob("*.json"))
if not samples:
    sys.exit("no sample surveys found in www/surveys/")
failures = 0
for path in samples:
    errors = list(validator.iter_errors(json.loads(path.read_text())))
    for e in errors:
        print(f"{path.relative_to(root)}: {'/'.join(map(str, e.path))}: {e.message}")
    failures += len(errors)

# The schema must reject what the parser rejects.
base = json.loads(samples[0].read_text())
broken = []
b = copy.deepcopy(base); b["questions"][0]["kind"] = "free_text"; broken.append(("unknown kind", b))
b = copy.deepcopy(base); b["masking"].pop("right_mask_key", None); b["masking"].pop("share_mode", None); broken.append(("no key, no share mode", b))
b = copy.deepcopy(base); b["id"] = "Has Spaces"; broken.append(("bad id", b))
b = copy.deepcopy(base); b["questions"] = []; broken.append(("no questions", b))
b = copy.deepcopy(base); b["surprise"] = 1; broken.append(("unknown field", b))
for label, doc in broken:
    if validator.is_valid(doc):
        print(f"schema accepts a broken definition: {label}")
        failures += 1

# Drafts (#/$defs/draft): the cases the survey team's JSON editor is tested on too
# (src/model/admin/editor.rs reads the same file), so the page and the schema refuse alike.
draft_validator = jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": "#/$defs/draft"})
cases = json.loads((root / "docs" / "draft-cases.json").read_text())
for draft in cases["valid"]:
    for e in draft_validator.iter_errors(draft):
        print(f"docs/draft-cases.json: valid draft {draft['id']}: {'/'.join(map(str, e.path))}: {e.message}")
        failures += 1
for case in cases["invalid"]:
    if draft_validator.is_valid(case["draft"]):
        print(f"docs/draft-cases.json: the schema accepts a draft with {case['why']}")
        failures += 1

print(f"{len(samples)} sample surveys and {len(cases['valid']) + len(cases['invalid'])} drafts checked against docs/survey.schema.json, {failures} problem(s)")
sys.exit(1 if failures else 0)

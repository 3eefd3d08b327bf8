"""Validate every sample survey definition in www/surveys/, and the draft cases of
docs/draft-cases.json, against docs/survey.schema.json; and the examples of the survey-team
API's answers (docs/api-examples.json) against their docs/openapi.yaml components.

The Rust parser (orthomask_survey::definition and ::validation, crates/survey/src/) is the authority at run time; this check keeps the
published JSON Schema honest: every sample the project ships must satisfy it, and a few
deliberately broken variants must not.
"""
import copy
import json
import pathlib
import sys

import jsonschema
from referencing import Registry, Resource
import yaml

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

# The survey-team API (orthomask_survey::api): the Rust types read each example and write it back
# unchanged (crates/survey/src/api.rs), and here each example must satisfy its OpenAPI component,
# whose objects admit no other property; every documented property must appear in some example,
# so a field the document adds is a field the types must read. Together: the types and the
# published contract have the same fields.
openapi = yaml.safe_load((root / "docs" / "openapi.yaml").read_text())
components = openapi["components"]
examples = json.loads((root / "docs" / "api-examples.json").read_text())
def resolve(node):
    while isinstance(node, dict) and "$ref" in node and node["$ref"].startswith("#/components/schemas/"):
        node = components["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node
def documented(node, path):
    """Every (path, property) an object schema of `node` documents, objects and arrays followed."""
    node = resolve(node)
    if not isinstance(node, dict):
        return
    for key, sub in node.get("properties", {}).items():
        yield f"{path}.{key}"
        yield from documented(sub, f"{path}.{key}")
    if "items" in node:
        yield from documented(node["items"], f"{path}[]")
def shown(value, path):
    """Every (path, property) the example shows, non-null."""
    if isinstance(value, dict):
        for key, sub in value.items():
            if sub is not None:
                yield f"{path}.{key}"
            yield from shown(sub, f"{path}.{key}")
    elif isinstance(value, list):
        for sub in value:
            yield from shown(sub, f"{path}[]")
# Components that hold a draft refer to docs/survey.schema.json, beside openapi.yaml.
survey_schema = Registry().with_resources(
    (uri, Resource.from_contents(schema)) for uri in ("./survey.schema.json", "survey.schema.json"))
api_checked = 0
for name, shown_cases in examples.items():
    if name not in components["schemas"]:
        print(f"docs/api-examples.json: {name} is no component of docs/openapi.yaml")
        failures += 1
        continue
    validator = jsonschema.Draft202012Validator(
        {"$ref": f"#/components/schemas/{name}", "components": components}, registry=survey_schema)
    seen = set()
    for i, case in enumerate(shown_cases):
        for e in validator.iter_errors(case):
            print(f"docs/api-examples.json: {name} example {i}: {'/'.join(map(str, e.path))}: {e.message}")
            failures += 1
        seen |= set(shown(case, name))
        api_checked += 1
    # The services' own reports inside `services[].status` are free-form: not followed.
    for prop in documented(components["schemas"][name], name):
        if prop not in seen and ".status." not in prop:
            print(f"docs/api-examples.json: no example of {name} shows {prop}")
            failures += 1

print(f"{len(samples)} sample surveys and {len(cases['valid']) + len(cases['invalid'])} drafts checked against docs/survey.schema.json, {api_checked} API examples against docs/openapi.yaml, {failures} problem(s)")
sys.exit(1 if failures else 0)

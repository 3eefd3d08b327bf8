#!/usr/bin/env python3
"""Name, digest and template the staged web app (scripts/build-web.sh, step 5; issue 25).

    python3 scripts/stage_web.py STAGE

1. The modules' glue and WebAssembly and the style sheet get content-hashed names:
   `orthomask-web.js` becomes `orthomask-web-HASH.js`, `orthomask-web_bg.wasm` becomes
   `orthomask-web-HASH_bg.wasm`, with HASH the first 16 hexadecimal digits of the file's SHA-256
   (`orthomask_survey::app_build::is_content_hashed` is the rule the collector and the service
   worker read such names by: served `immutable`, answered from the cache).
2. The marks of www/worker.js, then www/index.html, then www/sw.js become values of the staged
   files, each given by the name it had before step 1:
   `{{name F}}` its content-hashed name, `{{sri F}}` its Subresource Integrity digest (SHA-384,
   issue 27 §2), `{{sha256 F}}` its SHA-256 in hexadecimal (sw.js's LAZY_FILES), `{{build}}` 16
   hexadecimal digits that change with any file of the build but sw.js (the service worker's
   cache name), `{{early}}` the files a participant's page reads for its build (index.html's
   bootstrap fetches them while the module downloads: src/services/early.rs), as a JSON array,
   and `{{declared}}` every file but sw.js, index.html and LAZY_FILES with its SHA-256 (sw.js's
   DECLARED_FILES). worker.js comes before sw.js because sw.js declares worker.js's digest.
"""
import base64
import hashlib
import json
import pathlib
import re
import sys

HASHED = [
    ("orthomask-participant.js", "orthomask-participant-{}.js"),
    ("orthomask-participant_bg.wasm", "orthomask-participant-{}_bg.wasm"),
    ("orthomask-web.js", "orthomask-web-{}.js"),
    ("orthomask-web_bg.wasm", "orthomask-web-{}_bg.wasm"),
    ("style.css", "style-{}.css"),
]
DIGITS = 16  # orthomask_survey::app_build::CONTENT_HASH_DIGITS
TEMPLATES = ["worker.js", "index.html", "sw.js"]

stage = pathlib.Path(sys.argv[1])
names = {}
for plain, pattern in HASHED:
    data = (stage / plain).read_bytes()
    hashed = pattern.format(hashlib.sha256(data).hexdigest()[:DIGITS])
    (stage / plain).rename(stage / hashed)
    names[plain] = hashed


def current(name):
    """The staged file a mark names by its name before step 1."""
    return stage / names.get(name, name)


def build_id():
    lines = sorted(
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(stage)}\n"
        for p in stage.rglob("*")
        if p.is_file() and p.name != "sw.js"
    )
    return hashlib.sha256("".join(lines).encode()).hexdigest()[:DIGITS]


def staged_files():
    """Every file of the staged app, by its path in the app (`surveys/x.json`)."""
    return sorted(str(p.relative_to(stage)) for p in stage.rglob("*") if p.is_file())


def lazy_files():
    """The files sw.js's LAZY_FILES names (by a `{{sha256 F}}` mark in the template)."""
    template = (stage / "sw.js").read_text(encoding="utf-8")
    start = template.index("const LAZY_FILES = {")
    listed = template[start:template.index("};", start)]
    return {current(name).name if name in names else name
            for name in re.findall(r"\{\{sha256 ([^}]+)\}\}", listed)}


def declared_files():
    # Every file of the build but sw.js, index.html (the two a page reads for its build:
    # index.html names the Subresource Integrity digest of every file the page runs) and
    # LAZY_FILES, with its SHA-256 (orthomask_survey::app_build::declared_files).
    skip = {"sw.js", "index.html"} | lazy_files()
    return [f for f in staged_files() if f not in skip]


def declared_list():
    entries = "".join(
        f"\n  '{f}': '{hashlib.sha256((stage / f).read_bytes()).hexdigest()}',"
        for f in declared_files()
    )
    return "{" + entries + "\n}"


def early_files():
    # The files of the build a page reads to compute its build digest: every file but sw.js (the
    # bootstrap starts it first, for every such page) and those whose SHA-256 sw.js declares
    # (LAZY_FILES, DECLARED_FILES). That leaves index.html.
    skip = {"sw.js"} | lazy_files() | set(declared_files())
    return json.dumps([f for f in staged_files() if f not in skip])


def mark(match):
    kind, name = match.group(1), (match.group(2) or "").strip()
    if kind == "build":
        return build_id()
    if kind == "early":
        return early_files()
    if kind == "declared":
        return declared_list()
    if kind == "name":
        if name not in names:
            sys.exit(f"{{{{name {name}}}}}: {name} is not a content-hashed file of the build")
        return names[name]
    data = current(name).read_bytes()
    if kind == "sri":
        return "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()
    return hashlib.sha256(data).hexdigest()


for template in TEMPLATES:
    path = stage / template
    text = re.sub(r"\{\{(name|sri|sha256|build|early|declared)(?: ([^}]+))?\}\}", mark, path.read_text(encoding="utf-8"))
    if "{{" in text:
        sys.exit(f"www/{template}: a mark this build does not know is left")
    path.write_text(text, encoding="utf-8")

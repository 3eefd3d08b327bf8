"""Write the XLSForms the orthomask-xlsform tests import (crates/xlsform/tests/odk_forms.rs runs
this script into a fresh directory at every test run): openpyxl, a tool nobody here wrote, writes
the workbooks, so the import is tested on .xlsx files as the world makes them, not as our own
exporter does.

    python make_forms.py OUT_DIR

`accepted.xlsx` is a form of the kinds ODK's documentation shows (metadata, a consent, groups,
notes, bounds, a Likert scale, yes/no, categorical and multiple selects, skip logic, a hint, two
languages, model terms); each `refuse_<reason>.xlsx` is a small valid form with ONE row that
cannot be expressed, always on row 5 of its sheet unless the test says otherwise.
"""
import sys
from pathlib import Path

from openpyxl import Workbook

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)


def write(name, survey, choices=None, settings=None, extra=None):
    """A workbook with the given sheets, each a list of rows, the first being the header."""
    book = Workbook()
    book.remove(book.active)
    sheets = {"survey": survey, "choices": choices, "settings": settings}
    sheets.update(extra or {})
    for title, rows in sheets.items():
        if rows is None:
            continue
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
    book.save(out / name)


# ── accepted.xlsx: what a team's real ODK/KoboToolbox form looks like ──
EN, ES = "label::English (en)", "label::Español (es)"
HEN, HES = "hint::English (en)", "hint::Español (es)"
write(
    "accepted.xlsx",
    survey=[
        ["type", "name", EN, ES, HEN, HES, "required", "relevant", "constraint", "constraint_message", "appearance"],
        ["start", "start"],                                                           # row 2: ignored
        ["end", "end"],                                                               # row 3: ignored
        ["today", "today"],                                                           # row 4: ignored
        ["note", "intro", "A survey of health habits.", "Una encuesta de hábitos."],  # row 5: description
        ["acknowledge", "consent", "I agree to take part.", "Acepto participar.", None, None, "yes"],  # row 6
        ["begin group", "about_you", "About you", "Sobre usted", None, None, None, None, None, None, "field-list"],  # row 7
        ["integer", "age", "How old are you?", "¿Qué edad tiene?", "In years", "En años", "yes", None, ". >= 18 and . <= 99", "18 to 99"],  # row 8
        ["decimal", "height", "Your height", "Su estatura", None, None, "no", None, "(. >= 0.5) and (. <= 2.5)"],  # row 9
        ["end group"],                                                                # row 10
        ["select_one yes_no", "smokes", "Do you smoke?", "¿Fuma?", None, None, "yes"],  # row 11
        ["integer", "cigarettes", "Cigarettes a day", "Cigarrillos al día", None, None, "yes", "${smokes} = 'yes'", ". > 0 and . < 61"],  # row 12
        ["note", "health_note", "Now your health.", "Ahora su salud."],              # row 13: help of row 14
        ["select_one agree5", "satisfied", "I am satisfied with my health", "Estoy satisfecho con mi salud", "Think of this year", "Piense en este año", "yes", None, None, None, "likert"],  # row 14
        ["select_one region", "region", "Where do you live?", "¿Dónde vive?", None, None, "yes"],  # row 15
        ["select_multiple fruit", "fruits", "Which fruits do you eat?", "¿Qué frutas come?", "Tick all", "Marque todas", "no"],  # row 16
        ["integer", "apples", "Apples a week", "Manzanas por semana", None, None, "yes", "selected(${fruits}, 'apple')", ". >= 0 and . <= 50"],  # row 17
        ["select_one yes_no", "coast", "Do you live near the coast?", "¿Vive cerca de la costa?", None, None, "yes", "${region} = 'south' or ${region} = 'east'"],  # row 18
        ["select_one yes_no", "city", "Do you live in a city?", "¿Vive en una ciudad?", None, None, "yes", "${region} != 'north'"],  # row 19
        ["select_one yes_no", "retired", "Are you retired?", "¿Está jubilado?", None, None, "yes", "${age} >= 65"],  # row 20
        ["begin group", "unhappy", None, None, None, None, None, "${satisfied} = '1' or ${satisfied} = '2'"],  # row 21
        ["select_one yes_no", "doctor", "Have you seen a doctor?", "¿Ha visto a un médico?", None, None, "yes"],  # row 22
        ["end group"],                                                                # row 23
    ],
    choices=[
        ["list_name", "name", EN, ES],
        ["yes_no", "yes", "Yes", "Sí"],
        ["yes_no", "no", "No", "No"],
        ["agree5", 1, "Strongly disagree", "Muy en desacuerdo"],
        ["agree5", 2, "Disagree", "En desacuerdo"],
        ["agree5", 3, "Neither", "Ni uno ni otro"],
        ["agree5", 4, "Agree", "De acuerdo"],
        ["agree5", 5, "Strongly agree", "Muy de acuerdo"],
        ["region", "north", "North", "Norte"],
        ["region", "south", "South", "Sur"],
        ["region", "east", "East", "Este"],
        ["fruit", "apple", "Apples", "Manzanas"],
        ["fruit", "banana", "Bananas", "Plátanos"],
    ],
    settings=[
        ["form_title", "form_id", "version", "default_language", "orthomask_cohort_size"],
        ["Health habits", "health-habits", "2026112601", "English (en)", 40],
    ],
    extra={
        "orthomask_terms": [
            ["name", "kind", "of", "of2", "exponent", "at"],
            ["age_sq", "power", "age", None, 2],
            ["age_smokes", "product", "age", "smokes"],
        ]
    },
)

# ── One refusal per file: a small valid form, then the row that cannot be expressed ──
HEAD = ["type", "name", "label", "required", "relevant", "constraint"]
BASE = [
    HEAD,
    ["acknowledge", "consent", "I agree.", "yes"],                                   # row 2
    ["integer", "age", "Age", "yes", None, ". >= 18 and . <= 99"],                   # row 3
    ["select_one yes_no", "smokes", "Do you smoke?", "yes"],                         # row 4
]
CHOICES = [["list_name", "name", "label"], ["yes_no", "yes", "Yes"], ["yes_no", "no", "No"]]
SETTINGS = [["form_id", "form_title"], ["refusal", "A refusal"]]


def refuse(reason, row, base=BASE):
    write(f"refuse_{reason}.xlsx", base + [row], CHOICES, SETTINGS)


refuse("free_text", ["text", "name_given", "Your name?"])
refuse("location", ["geopoint", "where", "Where are you?"])
refuse("media", ["image", "photo", "Take a photo"])
refuse("date_time", ["date", "born", "Date of birth"])
refuse("repeat", ["begin repeat", "children", "Each child"])
refuse("calculation", ["calculate", "age2", None, None, None, None])
refuse("identifying", ["deviceid", "device"])
refuse("external_choices", ["select_one_from_file towns.csv", "town", "Town"])
refuse("or_other", ["select_one yes_no or_other", "likes", "Do you like it?"])
refuse("unsupported_type", ["rank", "order", "Rank these"])
refuse("missing_bounds", ["integer", "children", "How many children?", "yes"])
refuse("constraint", ["integer", "pin", "A number", "yes", None, "regex(., '^[0-9]+$')"])
refuse("relevant", ["select_one yes_no", "both", "Both?", "yes", "${age} > 30 and ${smokes} = 'yes'"])
refuse("required", ["select_one yes_no", "drinks", "Drinks?", "${smokes} = 'yes'"])
refuse("unknown_list", ["select_one colours", "colour", "Colour?"])
# A column whose meaning a draft cannot carry: choice_filter, filled on row 5 only.
write("refuse_column.xlsx", [HEAD + ["choice_filter"]] + BASE[1:] +
      [["select_one yes_no", "filtered", "Filtered?", "yes", None, None, "name != 'no'"]], CHOICES, SETTINGS)
refuse("name", ["integer", "your age", "Age again", "yes", None, ". >= 0 and . <= 9"])
refuse("second_consent", ["acknowledge", "consent2", "I agree again."])
refuse("trailing_note", ["note", "thanks", "Thank you!"])
# group_relevant: a group with relevant (row 5) holding a question with its own (row 6).
write("refuse_group_relevant.xlsx", BASE + [
    ["begin group", "g", None, None, "${smokes} = 'yes'"],                            # row 5
    ["select_one yes_no", "inner", "Inner?", "yes", "${age} > 40"],                  # row 6
    ["end group"],
], CHOICES, SETTINGS)
refuse("group", ["end group"])
refuse("draft", ["select_one yes_no", "age", "Age, again?", "yes"])                   # a duplicate name
refuse("consent_after_question", ["acknowledge", "late", "I agree now."],
       base=[HEAD, ["integer", "age", "Age", "yes", None, ". >= 18 and . <= 99"],
             ["select_one yes_no", "smokes", "Do you smoke?", "yes"],
             ["integer", "cigs", "Cigarettes", "yes", None, ". >= 0 and . <= 60"]])
write("refuse_no_consent.xlsx", [HEAD, BASE[2], BASE[3]], CHOICES, SETTINGS)
# A language column without its tag: refused at the header (row 1).
write("refuse_language_tag.xlsx", [HEAD + ["label::Spanish"]] + BASE[1:], CHOICES, SETTINGS)
# A translation missing on row 3.
write("refuse_untranslated.xlsx", [HEAD + ["label::Español (es)"]] + [
    BASE[1] + [None, None, "Acepto."],
    BASE[2] + [""],
    BASE[3] + ["¿Fuma?"],
], [CHOICES[0] + ["label::Español (es)"], CHOICES[1] + ["Sí"], CHOICES[2] + ["No"]], SETTINGS)
# A duplicate choice (choices sheet, row 4).
write("refuse_duplicate_choice.xlsx", BASE, CHOICES + [["yes_no", "yes", "Yes again"]], SETTINGS)
# A settings value that cannot be read (settings sheet, row 2).
write("refuse_setting.xlsx", BASE, CHOICES,
      [["form_id", "form_title", "orthomask_cohort_size"], ["refusal", "A refusal", "many"]])
# A model term of no known kind (orthomask_terms sheet, row 3).
write("refuse_term.xlsx", BASE, CHOICES, SETTINGS, extra={"orthomask_terms": [
    ["name", "kind", "of", "exponent"], ["age_sq", "power", "age", 2], ["age_spline", "spline", "age"]]})
# A group never ended (its begin on row 5).
refuse("group_unended", ["begin group", "g"])
# No survey sheet; a survey sheet without a type column.
write("refuse_no_survey.xlsx", None, CHOICES, SETTINGS, extra={"questions": BASE})
write("refuse_no_type_column.xlsx", [["kind"] + HEAD[1:]] + BASE[1:], CHOICES, SETTINGS)
# A form without a settings sheet: the id comes from the file's name, the title from the id.
write("no_settings.xlsx", BASE, CHOICES, None)

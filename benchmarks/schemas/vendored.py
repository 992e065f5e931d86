"""Real-world schemas shipped inside PyPI packages, as a sweep input (extracted at run time).

    python benchmarks/schemas/vendored.py --out /tmp/vendored.jsonl             # pip download
    python benchmarks/schemas/vendored.py --wheel check_jsonschema-0.39.0-py3-none-any.whl
    python benchmarks/schema_sweep.py --data /tmp/vendored.jsonl       # then sweep them
    python benchmarks/schemas/vendored.py --cfn-lint 200 --seed 1 --out /tmp/cfn200.jsonl

Sources: the SchemaStore and vendor schemas that ``check-jsonschema`` ships in
``builtin_schemas/vendor`` (CI, build and config files: GitHub workflows, GitLab CI, compose,
Renovate, ...; ``pip download --no-deps check-jsonschema==VERSION`` unless ``--wheel`` is given;
nothing is installed), and the JSON Schema metaschemas of the installed
``jsonschema-specifications``. Their licenses differ per file (SchemaStore's Apache-2.0, vendors'
own), so the schema texts are not committed to this repository.

``--cfn-lint N`` takes instead N resource-type schemas drawn (``--seed``) from the 1,898 that
``cfn-lint`` ships (``cfnlint/data/schemas/resources``: the CloudFormation registry's schemas of
AWS resource types, written by AWS teams, MIT-0): real-world object schemas with
``definitions``/``$ref``, patterns, enums, lengths, ``oneOf``/``anyOf``, and the registry's own
keywords (``handlers``, ``tagging``, ``primaryIdentifier``, ...: unknown keywords to a
validator). The script writes them to ``--out`` with a ``source`` and a ``license`` field per
schema (the first line of the license file the package ships for it).

Instances are drawn with :func:`generate.checked_instances` and checked by ``jsonschema``; for
most of these schemas the generator cannot draw one (patterns, remote ``$ref``, ``allOf``), and
the row then has no instances (the sweep still measures construction and the first mask).
"""

from __future__ import annotations

import argparse
import importlib.resources
import json
import random
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import generate  # noqa: E402

CHECK_JSONSCHEMA = "0.39.0"
CFN_LINT = "1.58.0"
CFN_RESOURCES = "cfnlint/data/schemas/resources/"
VENDOR = "check_jsonschema/builtin_schemas/vendor/"
#: schema file stem -> the suffix of its LICENSE.<suffix> in the vendor directory
LICENSE_OF = {"azure-pipelines": "azure-pipelines", "bitbucket-pipelines": "bitbucket-pipelines",
              "buildkite": "buildkite", "changie": "changie", "citation-file-format": "citation-file-format",
              "compose-spec": "compose-spec", "gitlab-ci": "gitlab", "meltano": "meltano",
              "readthedocs": "readthedocs", "renovate": "renovate", "snapcraft": "snapcraft",
              "taskfile": "task"}


def _download(dest: Path, req: str = f"check-jsonschema=={CHECK_JSONSCHEMA}") -> Path:
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(dest), req],
                   check=True)
    stem = req.split("==")[0].replace("-", "_")
    wheels = sorted(dest.glob(f"{stem}-*.whl"))
    if not wheels:
        raise SystemExit(f"pip download wrote no {stem} wheel into {dest}")
    return wheels[0]


def cfn_lint_rows(wheel: Path, count: int, seed: int) -> list[dict]:
    """``count`` resource-type schemas of the cfn-lint wheel, drawn with ``seed``."""
    with zipfile.ZipFile(wheel) as z:
        names = sorted(n for n in z.namelist() if n.startswith(CFN_RESOURCES) and n.endswith(".json"))
        lic = next((n for n in z.namelist() if n.endswith("licenses/LICENSE")), None)
        title = _first_line(z.read(lic).decode("utf-8", "replace")) if lic else "unknown"
        rows = []
        for name in random.Random(seed).sample(names, min(count, len(names))):
            schema = json.loads(z.read(name))
            label = str(schema.get("typeName", Path(name).stem)).replace("::", "-")
            rows.append(dict(name=f"cfn-{label}", schema=schema, source=f"{wheel.name}:{name}",
                             license=f"{title} ({lic})"))
    return rows


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "?")


def vendored_rows(wheel: Path) -> list[dict]:
    rows = []
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for name in sorted(n for n in names if n.startswith(VENDOR) and n.endswith(".json")
                           and "/" not in n[len(VENDOR):]):
            stem = Path(name).stem
            lic = f"{VENDOR}licenses/LICENSE.{LICENSE_OF.get(stem, 'schemastore')}"
            title = _first_line(z.read(lic).decode("utf-8", "replace")) if lic in names else "unknown"
            rows.append(dict(name=f"vendor-{stem}", schema=json.loads(z.read(name)),
                             source=f"{wheel.name}:{name}", license=f"{title} ({lic})"))
    return rows


def metaschema_rows() -> list[dict]:
    from importlib.metadata import version
    root = importlib.resources.files("jsonschema_specifications") / "schemas"
    rows = []
    for draft in sorted(p.name for p in root.iterdir() if p.is_dir()):
        f = root / draft / "metaschema.json"
        if f.is_file():
            rows.append(dict(name=f"metaschema-{draft}", schema=json.loads(f.read_text()),
                             source=f"jsonschema-specifications {version('jsonschema-specifications')}: "
                                    f"schemas/{draft}/metaschema.json",
                             license="see the JSON Schema specification's license (json-schema.org)"))
    return rows


def with_instances(rows: list[dict], seed: int) -> list[dict]:
    r = random.Random(seed)
    for row in rows:
        try:
            row["valid"], row["invalid"] = generate.checked_instances(row["schema"], r)
        except Exception:  # noqa: BLE001  (a schema jsonschema itself cannot handle: no instances)
            row["valid"], row["invalid"] = [], []
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheel", default=None, help="a check_jsonschema wheel (else pip download)")
    ap.add_argument("--out", default="vendored.jsonl")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cfn-lint", type=int, default=None, metavar="N",
                    help=f"N CloudFormation resource schemas of cfn-lint {CFN_LINT} instead")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        if args.cfn_lint:
            wheel = Path(args.wheel) if args.wheel else _download(Path(tmp), f"cfn-lint=={CFN_LINT}")
            rows = cfn_lint_rows(wheel, args.cfn_lint, args.seed)
        else:
            wheel = Path(args.wheel) if args.wheel else _download(Path(tmp))
            rows = vendored_rows(wheel) + metaschema_rows()
    rows = with_instances(rows, args.seed)
    with open(args.out, "w") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    n_inst = sum(bool(r["valid"]) for r in rows)
    print(f"wrote {len(rows)} schemas ({n_inst} with instances) to {args.out}")


if __name__ == "__main__":
    main()

"""Triton 3.9 as an oracle: parse attribute *text* with Triton's own MLIR parser and return the
bases of ``to_linear_layout``. Run as a script (it can abort the process on some inputs).

stdin: JSON list of {"id", "text", "shape", "memory", "warps", "ctas", "elem"}.
stdout: one JSON object per line: {"id", "ok", "bases" | "error"}.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")


def _module(items: list[dict], warps: int, ctas: int, lanes: int = 32) -> str:
    target = "cuda:90" if lanes == 32 and not items[0].get("amd") else "hip:gfx942"
    lines = [
        f'module attributes {{"ttg.num-ctas" = {ctas} : i32, "ttg.num-warps" = {warps} : i32, '
        f'"ttg.threads-per-warp" = {lanes} : i32, ttg.target = "{target}"}} {{',
        "  tt.func @k() {",
    ]
    for n, it in enumerate(items):
        shape = "x".join(str(s) for s in it["shape"])
        elem = it.get("elem", "i16")
        if it["memory"]:
            lines.append(
                f"    %v{n} = ttg.local_alloc : () -> !ttg.memdesc<{shape}x{elem}, {it['text']}, "
                "#ttg.shared_memory, mutable>"
            )
        else:
            lines.append(f"    %v{n} = arith.constant dense<0> : tensor<{shape}x{elem}, {it['text']}>")
    lines += ["    tt.return", "  }", "}"]
    return "\n".join(lines)


def _padded_fields(lay) -> list:
    """A ``PaddedSharedLayout``'s fields as plain lists (Triton's readback holds tuples)."""
    return [
        [list(x) for x in getattr(lay, f)] for f in ("interval_padding_pairs", "offset_bases", "cga_layout")
    ] + [list(lay.shape)]


def _run(items: list[dict], warps: int, ctas: int, lanes: int = 32) -> list[dict]:
    from triton._C.libtriton import gluon_ir, ir

    ctx = ir.context()
    ir.load_dialects(ctx)
    b = gluon_ir.GluonOpBuilder(ctx)
    with tempfile.NamedTemporaryFile("w", suffix=".ttgir", delete=False) as fh:
        fh.write(_module(items, warps, ctas, lanes))
        path = fh.name
    try:
        mod = ir.parse_mlir_module(path, ctx)
    except Exception as e:  # noqa: BLE001 - report any parser failure as data
        if len(items) > 1:  # one bad item spoils the module: answer each alone
            return [r for it in items for r in _run([it], warps, ctas, lanes)]
        return [{"id": items[0]["id"], "ok": False, "error": f"parse: {e}"[:400]}]
    finally:
        os.unlink(path)
    values = []
    mod.walk(lambda op: values.append(op) if op.get_name() in ("arith.constant", "ttg.local_alloc") else None)
    out = []
    for it, op in zip(items, values):
        v = op.get_result(0)
        try:
            if it["memory"]:
                lay = b.get_gluon_layout_from_memdesc(v)
                if type(lay).__name__ == "PaddedSharedLayout":
                    res = {
                        "object": _padded_fields(lay),
                        "intervals": [list(p) for p in lay.interval_padding_pairs],
                        "offset": [list(x) for x in lay.offset_bases],
                        "block": [list(x) for x in lay.cga_layout],
                    }
                else:
                    ll = b.to_linear_layout(lay._to_ir(b), list(it["shape"]))
                    res = {
                        "offset": [list(x) for x in ll.offset_bases],
                        "block": [list(x) for x in ll.block_bases],
                    }
            else:
                lay = b.get_gluon_layout_from_tensor(v)
                ll = b.to_linear_layout(lay._to_ir(b), list(it["shape"]))
                res = {
                    "register": [list(x) for x in ll.reg_bases],
                    "lane": [list(x) for x in ll.lane_bases],
                    "warp": [list(x) for x in ll.warp_bases],
                    "block": [list(x) for x in ll.block_bases],
                }
            obj = res.pop("object", None)
            out.append({"id": it["id"], "ok": True, "bases": res, **({"object": obj} if obj else {})})
        except Exception as e:  # noqa: BLE001
            out.append({"id": it["id"], "ok": False, "error": str(e)[:400]})
    return out


def _gluon(items: list[dict]) -> list[dict]:
    """Gluon objects built from recipes: ``to_linear_layout`` of each; a padded layout has none
    (Triton aborts), so its answer is its own fields as Triton reads them back from our text."""
    import triton.experimental.gluon.language as ttgl
    from triton._C.libtriton import gluon_ir, ir

    from tests.oracle.gluon_generate import build

    ctx = ir.context()
    ir.load_dialects(ctx)
    b = gluon_ir.GluonOpBuilder(ctx)
    out = []
    for it in items:
        try:
            obj = build(it["recipe"], {**vars(ttgl), **vars(ttgl.amd)})
            if it["recipe"]["cls"] == "PaddedSharedLayout":
                back = _run([{**it, "memory": True}], 1, 1)[0]
                back["same_object"] = back.get("object") == _padded_fields(obj)
                out.append(back)
                continue
            ll = b.to_linear_layout(obj._to_ir(b), list(it["shape"]))
            bases = (
                {
                    "register": ll.reg_bases,
                    "lane": ll.lane_bases,
                    "warp": ll.warp_bases,
                    "block": ll.block_bases,
                }
                if not it["memory"]
                else {  # fmt: skip
                    "offset": ll.offset_bases,
                    "block": ll.block_bases,
                }
            )
            out.append(
                {"id": it["id"], "ok": True, "bases": {k: [list(x) for x in v] for k, v in bases.items()}}
            )
        except Exception as e:  # noqa: BLE001 - Triton refused the object: report as data
            out.append({"id": it["id"], "ok": False, "error": str(e)[:400]})
    return out


def main() -> None:
    items = json.load(sys.stdin)
    sys.path.insert(0, str(Path(__file__).parents[2]))
    gluon = [it for it in items if "recipe" in it]
    for res in _gluon(gluon) if gluon else []:
        sys.stdout.write(json.dumps(res) + "\n")
    items = [it for it in items if "recipe" not in it]
    groups: dict[tuple[int, int, int, bool], list[dict]] = {}
    for it in items:
        key = (it["warps"], it["ctas"], it.get("lanes", 32), bool(it.get("amd")))
        groups.setdefault(key, []).append(it)
    for (warps, ctas, lanes, _), group in groups.items():
        for res in _run(group, warps, ctas, lanes):
            sys.stdout.write(json.dumps(res) + "\n")
    sys.stdout.flush()
    os._exit(0)  # skip nanobind's leak report at interpreter exit


if __name__ == "__main__":
    main()

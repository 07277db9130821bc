"""``lit-sb3 export MODEL.zip --format onnx|torchscript|torch-export [--out FILE]``: a deployable policy.

The exported graph takes raw observations and returns env actions (see ``lit_sb3_core.engine.exporters``),
so it runs with onnxruntime (or libtorch) alone, without lit-sb3.
"""

from __future__ import annotations

import argparse
import json

from lit_sb3_core.cli.common import CliError
from lit_sb3_core.cli.evaluate import check_model_path

__all__ = ["configure", "run_export"]

_FORMATS = ("onnx", "torchscript", "torch-export")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Export a saved model's deterministic policy: raw observations in, environment actions out, with "
        "observation normalization, image scaling, action rescaling/clipping and argmax inside the graph. "
        "RecurrentPPO's graph also takes and returns the LSTM state; MaskablePPO's takes the action masks."
    )
    parser.epilog = (
        "examples:\n  lit-sb3 export ppo_cartpole.zip                      # ppo_cartpole.onnx\n"
        "  lit-sb3 export ppo_cartpole.zip --format torchscript --out policy.pt\n"
        "  lit-sb3 export sac_pendulum.zip --format torch-export   # sac_pendulum.pt2"
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("model", help="model file written by model.save() or `lit-sb3 train`")
    parser.add_argument("--format", choices=_FORMATS, default="onnx", help="export format (default onnx)")
    parser.add_argument(
        "--out", default=None, metavar="FILE", help="output file (default: the model's name, .onnx/.pt/.pt2)"
    )
    parser.add_argument("--opset", type=int, default=None, help="ONNX opset version (default 17)")


def run_export(args: argparse.Namespace) -> int:
    import importlib.util

    from lit_sb3_core.cli.evaluate import load_model_file
    from lit_sb3_core.engine.exporters import METADATA_NAME, default_export_path

    check_model_path(args.model)
    if args.format == "onnx" and importlib.util.find_spec("onnx") is None:
        raise CliError("--format onnx needs the onnx package: pip install 'lit-sb3-core[onnx]'.")
    model = load_model_file(args.model)
    out = args.out or default_export_path(args.model, args.format)
    path = model.export(out, format=args.format, opset=args.opset)
    metadata = _read_metadata(path, args.format, METADATA_NAME)
    inputs = ", ".join(f"{i['name']} {_shape(i)} {i['dtype']}" for i in metadata["inputs"])
    outputs = ", ".join(f"{o['name']} {_shape(o)} {o['dtype']}" for o in metadata["outputs"])
    print(f"Exported {type(model).__name__} ({args.format}) to {path}")
    print(f"  inputs:  {inputs}")
    print(f"  outputs: {outputs}")
    return 0


def _shape(entry: dict) -> str:
    return "(" + ", ".join(str(n) for n in entry["shape"]) + ")"


def _read_metadata(path: object, format: str, name: str) -> dict:
    """The JSON description the exporter wrote into the file (read back: what was written is shown)."""
    if format == "onnx":
        import onnx

        proto = onnx.load(str(path), load_external_data=False)
        entries = {entry.key: entry.value for entry in proto.metadata_props}
        return json.loads(entries[name])
    import zipfile

    with zipfile.ZipFile(str(path)) as archive:
        member = next(n for n in archive.namelist() if n.endswith(f"extra/{name}") or n.endswith(name))
        return json.loads(archive.read(member))

"""The only module that imports onnxruntime: ``OnnxModel(path).run(batch)``.

Models are loaded once, checked against their sha256 when a ``.sha256`` file sits beside them,
and warmed up on construction so the first live frame is not slow.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnxruntime as ort


class ModelFileError(ValueError):
    """A model file that is missing, unreadable or not the file its checksum names."""


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class OnnxModel:
    """One ONNX model on the CPU with a single input and one or more outputs."""

    def __init__(self, path: str | Path, threads: int = 1, warmup_shape: tuple[int, ...] | None = None):
        self.path = Path(path)
        if not self.path.is_file():
            raise ModelFileError(f"model file not found: {str(self.path)!r}")
        expected = self.path.with_suffix(self.path.suffix + ".sha256")
        if expected.is_file():
            want = expected.read_text().split()[0]
            got = sha256_of(self.path)
            if want != got:
                raise ModelFileError(f"model file {str(self.path)!r} has sha256 {got}, expected {want}")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle pool threads would spin between runs and take the core the caller's own numpy and
        # OpenCV work needs (on 2 cores: table frames 97 ms with spinning, see docs/recognition.md).
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self.session = ort.InferenceSession(str(self.path), opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types
            raise ModelFileError(f"cannot load model {str(self.path)!r}: {exc}") from exc
        inp = self.session.get_inputs()[0]
        self.input_name = inp.name
        self.input_shape = tuple(inp.shape)
        self.output_names = [o.name for o in self.session.get_outputs()]
        if warmup_shape is not None:
            self.run(np.zeros(warmup_shape, np.float32))

    def run(self, batch: npt.NDArray[np.float32]) -> list[npt.NDArray[np.float32]]:
        """Run the model on one input batch; returns the outputs in the model's order."""
        outs = self.session.run(self.output_names, {self.input_name: np.ascontiguousarray(batch, np.float32)})
        return [np.asarray(o) for o in outs]


def quantize_int8(src: Path, out: Path, batches: list[npt.NDArray[np.float32]]) -> None:
    """Write ``src`` quantized statically to 8 bits as ``out``: QDQ format, unsigned 8-bit
    activations whose ranges are calibrated (min / max) on ``batches`` (inputs of the model's one
    input), signed 8-bit weights per output channel with ``reduce_range`` (7-bit, so that CPUs
    without VNNI cannot saturate their 16-bit accumulators).  Needs the ``onnx`` package (a
    training tool: ``scripts/quantize_model.py``; the runtime only runs the file it writes)."""
    import tempfile

    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    name = OnnxModel(src).input_name

    class Reader(CalibrationDataReader):  # type: ignore[misc]
        def __init__(self) -> None:
            self.left = iter(batches)

        def get_next(self) -> dict[str, npt.NDArray[np.float32]] | None:
            b = next(self.left, None)
            return None if b is None else {name: np.ascontiguousarray(b, np.float32)}

    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        pre = Path(tmp) / "pre.onnx"
        quant_pre_process(str(src), str(pre))
        quantize_static(str(pre), str(out), Reader(), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, per_channel=True,
                        reduce_range=True)

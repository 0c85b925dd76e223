"""A float ONNX graph run with torch operators, so an attacker gets its gradients: the operators YAMNet's and
basic-pitch's graphs use, each as the ONNX specification defines it (checked against onnxruntime in
tests/benchmarks/test_attacks.py). `straight_through` is the rounding every surrogate passes straight through."""

from __future__ import annotations

import numpy as np


def straight_through(value, rounded):
    """`rounded`'s value with `value`'s gradient (the rounding passed straight through)."""
    return value + (rounded - value).detach()


def initializers(model) -> dict[str, np.ndarray]:
    from onnx import numpy_helper

    return {item.name: numpy_helper.to_array(item) for item in model.graph.initializer}


class OnnxInTorch:
    """A float ONNX graph run with torch operators, so it has gradients: the operators YAMNet's and
    basic-pitch's graphs use, each as the ONNX specification defines it. QuantizeLinear rounds with a
    straight-through gradient (BPDA: the forward is the graph's, the backward the identity's)."""

    def __init__(self, model, batch_reshape: bool = False):
        """`batch_reshape`: a Reshape to [1, -1] keeps the batch (YAMNet's graph flattens one patch that way;
        run on a batch of patches at once, each keeps its own row)."""
        import torch

        self.graph, self.batch_reshape = model.graph, batch_reshape
        self.constants = {name: torch.from_numpy(np.array(value)) for name, value in initializers(model).items()}
        self.outputs = [item.name for item in self.graph.output]

    def __call__(self, **inputs) -> dict:
        values = {**self.constants, **inputs}
        for node in self.graph.node:
            args = [values[name] if name else None for name in node.input]
            out = getattr(self, "op_" + node.op_type)(*args, **_attributes(node))
            for name, value in zip(node.output, out if isinstance(out, tuple) else (out,)):
                values[name] = value
        return {name: values[name] for name in self.outputs}

    # shapes and layout
    def op_Reshape(self, x, shape, allowzero=0):
        dims = [int(d) for d in shape.tolist()]
        if self.batch_reshape and dims == [1, -1]:
            dims = [x.shape[0], -1]
        dims = [x.shape[i] if (d == 0 and not allowzero) else d for i, d in enumerate(dims)]
        return x.reshape(dims)

    def op_Unsqueeze(self, x, axes):
        for axis in sorted(int(a) if a >= 0 else int(a) + x.dim() + 1 for a in axes.tolist()):
            x = x.unsqueeze(axis)
        return x

    def op_Transpose(self, x, perm):
        return x.permute(*perm)

    def op_Concat(self, *xs, axis):
        return __import__("torch").cat(xs, dim=axis)

    def op_Shape(self, x, start=0, end=None):
        return __import__("torch").tensor(list(x.shape)[start:end], dtype=__import__("torch").int64)

    def op_Cast(self, x, to):
        import torch

        return x.to({1: torch.float32, 6: torch.int32, 7: torch.int64, 9: torch.bool}[to])

    def op_Slice(self, x, starts, ends, axes=None, steps=None):
        index = [slice(None)] * x.dim()
        axes = axes.tolist() if axes is not None else list(range(len(starts)))
        steps = steps.tolist() if steps is not None else [1] * len(axes)
        for axis, start, end, step in zip(axes, starts.tolist(), ends.tolist(), steps):
            index[axis] = slice(int(start), min(int(end), x.shape[axis]) if end >= 0 else int(end), int(step))
        return x[tuple(index)]

    def op_Pad(self, x, pads, value=None, mode=b"constant"):
        import torch.nn.functional as F

        count, pads = x.dim(), [int(p) for p in pads.tolist()]
        # ONNX: all begins then all ends, first axis first; torch: last axis first, (begin, end) pairs
        torch_pads = [p for axis in reversed(range(count)) for p in (pads[axis], pads[axis + count])]
        while len(torch_pads) > 2 and torch_pads[-2:] == [0, 0]:
            torch_pads = torch_pads[:-2]
        if mode == b"reflect":
            squeezed = x.reshape(-1, 1, x.shape[-1]) if torch_pads[2:] == [] else None
            if squeezed is not None:
                return F.pad(squeezed, torch_pads, mode="reflect").reshape(*x.shape[:-1], -1)
            return F.pad(x.movedim(-2, -1), [torch_pads[2], torch_pads[3]], mode="reflect").movedim(-1, -2)
        return F.pad(x, torch_pads, value=float(value) if value is not None else 0.0)

    # arithmetic
    def op_Neg(self, x):
        return -x

    def op_Mul(self, a, b):
        return a * b

    def op_Add(self, a, b):
        return a + b

    def op_Sub(self, a, b):
        return a - b

    def op_Div(self, a, b):
        # a zero divisor only occurs in basic-pitch's divide-no-NaN, whose Where then picks 0: dividing by 1
        # there keeps the forward and stops inf from poisoning the gradient of the branch Where discards
        return a / __import__("torch").where(b == 0, __import__("torch").ones_like(b), b)

    def op_Sqrt(self, x):
        return x.clamp_min(1e-30).sqrt()  # the same value; a finite gradient at 0 (zero padding)

    def op_Log(self, x):
        return x.log()

    def op_Relu(self, x):
        return x.clamp_min(0.0)

    def op_Sigmoid(self, x):
        return x.sigmoid()

    def op_Equal(self, a, b):
        return a == b

    def op_Where(self, condition, a, b):
        return __import__("torch").where(condition, a, b)

    def _reduce(self, x, axes, keepdims, how):
        dims = tuple(int(a) for a in (axes.tolist() if hasattr(axes, "tolist") else axes)) if axes is not None else None
        if how == "sum":
            return x.sum(dim=dims, keepdim=bool(keepdims)) if dims else x.sum()
        for axis in sorted(dims or range(x.dim()), reverse=True):
            x = getattr(x, how)(dim=axis, keepdim=bool(keepdims)).values
        return x

    def op_ReduceSum(self, x, axes=None, keepdims=1, noop_with_empty_axes=0):
        return self._reduce(x, axes, keepdims, "sum")

    def op_ReduceMax(self, x, axes=None, keepdims=1):
        return self._reduce(x, axes, keepdims, "max")

    def op_ReduceMin(self, x, axes=None, keepdims=1):
        return self._reduce(x, axes, keepdims, "min")

    # layers
    def op_Conv(
        self,
        x,
        weight,
        bias=None,
        strides=(1, 1),
        dilations=(1, 1),
        pads=(0, 0, 0, 0),
        group=1,
        kernel_shape=None,
        auto_pad=b"NOTSET",
    ):
        import torch.nn.functional as F

        half = len(pads) // 2
        if any(pads[i] != pads[i + half] for i in range(half)):
            x = F.pad(x, [p for i in reversed(range(half)) for p in (pads[i], pads[i + half])])
            padding = 0
        else:
            padding = tuple(pads[:half])
        return F.conv2d(x, weight, bias, tuple(strides), padding, tuple(dilations), group)

    def op_Gemm(self, a, b, c=None, alpha=1.0, beta=1.0, transA=0, transB=0):
        a, b = (a.T if transA else a), (b.T if transB else b)
        return alpha * (a @ b) + (beta * c if c is not None else 0.0)

    def op_GlobalAveragePool(self, x):
        return x.mean(dim=tuple(range(2, x.dim())), keepdim=True)

    def op_QuantizeLinear(self, x, scale, zero_point=None, axis=1):
        import torch

        low, high = (0, 255) if zero_point is None or zero_point.dtype == torch.uint8 else (-128, 127)
        zero = zero_point.float() if zero_point is not None else 0.0
        scaled = x / _per_axis(scale, x, axis) + _per_axis(zero, x, axis)
        rounded = torch.clamp(torch.round(scaled), low, high)
        return straight_through(scaled, rounded)  # kept float for DequantizeLinear

    def op_DequantizeLinear(self, x, scale, zero_point=None, axis=1):
        zero = zero_point.float() if zero_point is not None else 0.0
        return (x.float() - _per_axis(zero, x, axis)) * _per_axis(scale, x, axis)


def _per_axis(value, x, axis: int):
    """A per-tensor scalar, or a per-channel vector shaped to broadcast along `axis` of x."""
    if not hasattr(value, "dim") or value.dim() == 0 or value.numel() == 1:
        return value.reshape(()) if hasattr(value, "reshape") else value
    shape = [1] * x.dim()
    shape[axis] = -1
    return value.reshape(shape)


def _attributes(node) -> dict:
    from onnx import helper

    return {item.name: helper.get_attribute_value(item) for item in node.attribute}

"""``nn.LSTM``'s arithmetic written step by step from its weights, with a reset mask, for compiled updates.

``RecurrentPPO(compile=True)`` traces each minibatch update into one program (``torch.compile`` with
``fullgraph``). ``nn.LSTM``'s fused operator does not trace there: under ``torch.func.grad_and_value`` its
backward fails in dynamo's fake-tensor pass (torch 2.13), and ``torch._higher_order_ops.scan`` over a cell
fails the same way. Written from the weights, the recurrence is plain tensor operators: the input
projection of every step in one product, then per step one ``(columns, hidden) @ (hidden, 4 * hidden)``
product and the gates, which inductor fuses into one kernel per step. The numbers are ``nn.LSTM``'s (PyTorch's
gate order ``i, f, g, o``; biases ``b_ih + b_hh``) within float rounding.

The mask lets one column hold several episodes of one env: where ``keep`` is 0 the state is zeroed before
that step, exactly as a new sequence starting from a stored state times ``1 - episode_start`` would be.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["lstm_steps"]


def lstm_steps(
    lstm: nn.LSTM,
    inputs: torch.Tensor,
    state: tuple[torch.Tensor, torch.Tensor],
    keep: torch.Tensor,
) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """Run ``lstm`` (time-major, unidirectional, no projection, no dropout) over ``inputs``.

    Args:
        lstm: the module whose weights are used (under ``functional_call``: the traced ones).
        inputs: ``(steps, columns, input_size)``.
        state: ``(h, c)``, each ``(num_layers, columns, hidden_size)``: the state before the first step.
        keep: ``(steps, columns)``: 0.0 where a column's state is reset to zero before that step, else 1.0.

    Returns:
        ``(outputs, (h, c))``: the last layer's output of every step ``(steps, columns, hidden_size)`` and the
        state after the last step.
    """
    steps = inputs.shape[0]
    factors = keep.unsqueeze(-1).unbind(0)  # (columns, 1) per step
    layer_input = inputs
    last_h: list[torch.Tensor] = []
    last_c: list[torch.Tensor] = []
    for layer in range(lstm.num_layers):
        w_ih = getattr(lstm, f"weight_ih_l{layer}")
        w_hh = getattr(lstm, f"weight_hh_l{layer}")
        bias = None
        if lstm.bias:
            bias = getattr(lstm, f"bias_ih_l{layer}") + getattr(lstm, f"bias_hh_l{layer}")
        projected = F.linear(layer_input, w_ih, bias).unbind(0)  # every step's input term at once
        recurrent = w_hh.t()
        h, c = state[0][layer], state[1][layer]
        outputs = []
        for step in range(steps):
            h, c = h * factors[step], c * factors[step]
            gates = torch.addmm(projected[step], h, recurrent)
            i, f, g, o = gates.chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            outputs.append(h)
        layer_input = torch.stack(outputs)
        last_h.append(h)
        last_c.append(c)
    return layer_input, (torch.stack(last_h), torch.stack(last_c))

"""A fortieth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared:
sequence models written by hand.

These add what the other program files do not run: beam search on a tiny GRU decoder (log_softmax, topk over the
flattened beam*vocab scores, floor division and remainder to recover beams and tokens, index_select of the hidden
states, gather of back-pointers, finished beams masked to -inf, a length penalty, backtracking); greedy CTC
decoding with unique_consecutive and ctc_loss under every reduction, zero_infinity, a blank other than 0, targets
padded 2-d and concatenated 1-d, impossible alignments (inf) and their gradients, with its refusals; nn.LSTM with
proj_size, bidirectional two-layer outputs and the h_n/c_n layout, batch_first, dropout between layers under a
seed, and h0/c0 shape and dtype refusals; nn.RNN with nonlinearity='relu'; RNNCell/LSTMCell/GRUCell unrolled by
hand against the module with copied weights (flatten_parameters, ``weight_ih_l0_reverse``, all_weights); packing
(pack_padded_sequence sorted and unsorted and its refusal, pad_packed_sequence with total_length, pad_sequence
with batch_first, padding_value and padding_side='left', unpad_sequence/unpack_sequence); additive and
dot-product attention over encoder outputs with bmm and a masked softmax; teacher forcing with a seeded coin flip;
and gradient clipping of RNN weights. Everything is drawn from the seeded global generator, which is torch's;
values are compared to a tolerance (matrix products are not bit for bit).

Differences these programs found, now fixed (``tests/ops/test_program40_findings_vs_torch.py``):
- ``index_select`` with an out-of-range back-pointer always said "index out of range in self" (IndexError);
  torch's CPU kernel says "INDICES element is out of DATA bounds, id=.. axis_dim=.." (RuntimeError) along dim 1
  of a tensor of two or more dims and in an empty tensor, and "self indexing axis dim should be positive" for an
  empty selected dim;
- ``pad_sequence`` of 0-d tensors and ``pack_padded_sequence`` of a 1-d or 0-d input failed with the wrong error
  (or inside NumPy), and a bad ``padding_side`` was checked after the lengths;
- ``nn.RNN(3, True)`` built a network where torch's ``empty()`` refuses the bool size;
- ``unique``/``unique_consecutive`` by ``dim`` gave results for tensors with a size-0 dim not selected (or
  several) where torch refuses them, and failed inside NumPy for a 0-d tensor.

Left: an ``nn.LSTM`` in bfloat16 runs through oneDNN in torch (``MkldnnRnnLayerBackward0``, rounding of its
own), so its outputs differ in the last bits and its grad_fn is ``StackBackward0``; ``ctc_loss`` with a target
label outside ``[0, C)`` is refused where torch reads past the class dim (so no program passes one).
"""

from __future__ import annotations

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _beam_search_gru(lib, show):
    """Beam search on a tiny GRU decoder: scores of every beam's next token flattened, topk, the beam recovered by
    floor division and the token by remainder, the hidden state reordered, finished beams frozen, a length
    penalty, and the best hypothesis read back through the back-pointers."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(400)
    vocab, hidden, beam, eos, bos, steps = 7, 6, 3, 1, 0, 5
    embed = nn.Embedding(vocab, hidden)
    gru = nn.GRU(hidden, hidden)
    head = nn.Linear(hidden, vocab)
    h = torch.randn(1, 1, hidden).expand(1, beam, hidden).contiguous()
    scores = torch.tensor([0.0] + [float("-inf")] * (beam - 1))
    tokens = torch.full((beam, 1), bos, dtype=torch.long)
    lengths = torch.zeros(beam, dtype=torch.long)
    finished = torch.zeros(beam, dtype=torch.bool)
    back: list = []
    with torch.no_grad():
        for step in range(steps):
            out, h = gru(embed(tokens[:, -1]).unsqueeze(0), h)
            logp = F.log_softmax(head(out.squeeze(0)), dim=-1)
            # a finished beam may only extend with EOS, at no cost
            frozen = torch.full_like(logp, float("-inf"))
            frozen[:, eos] = 0.0
            logp = torch.where(finished.unsqueeze(1), frozen, logp)
            total = (scores.unsqueeze(1) + logp).view(-1)
            top, flat = total.topk(beam)
            origin = flat // vocab
            token = flat % vocab
            show(step, top, flat, origin, token, torch.div(flat, vocab, rounding_mode="floor").equal(origin))
            back.append(origin)
            h = h.index_select(1, origin)
            tokens = torch.cat([tokens.index_select(0, origin), token.unsqueeze(1)], dim=1)
            lengths = lengths.gather(0, origin) + (~finished.gather(0, origin)).long()
            finished = finished.gather(0, origin) | (token == eos)
            scores = top
            if bool(finished.all()):
                break
    penalty = ((5.0 + lengths.float()) / 6.0) ** 0.6
    normalised = scores / penalty
    best = int(normalised.argmax())
    show(tokens, lengths, finished, penalty, normalised, best)
    pointers = torch.stack(back)
    path = [best]
    for row in reversed(pointers[1:].unbind(0)):
        path.append(int(row[path[-1]]))
    show(pointers, pointers.dtype, path[::-1])
    masked = scores.masked_fill(~finished, float("-inf"))
    show(masked, masked.max(), torch.isinf(masked).sum())
    show_outcome(show, lambda: total.topk(vocab * beam + 1))
    show_outcome(show, lambda: h.index_select(1, origin.float()))
    show_outcome(show, lambda: h.index_select(1, flat))  # a flat index taken for a beam: out of range on dim 1
    show_outcome(show, lambda: tokens.index_select(0, flat))
    show_outcome(show, lambda: scores.masked_fill(finished.long(), 0.0))


def _ctc_loss_every_way(lib, show):
    """ctc_loss under every reduction, with the targets padded 2-d and concatenated 1-d, a blank at the end, an
    impossible alignment (inf) with and without zero_infinity, and the gradients that flow back."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(401)
    T, N, C = 6, 3, 5
    logits = torch.randn(T, N, C, requires_grad=True)
    log_probs = logits.log_softmax(2)
    padded = torch.tensor([[1, 2, 2], [3, 1, 0], [4, 4, 4]])
    target_lengths = torch.tensor([3, 2, 3])
    input_lengths = torch.tensor([6, 5, 4])
    for reduction in ("none", "mean", "sum"):
        show(reduction, F.ctc_loss(log_probs, padded, input_lengths, target_lengths, reduction=reduction))
    flat = torch.cat([padded[i, :n] for i, n in enumerate(target_lengths.tolist())])
    show(flat, F.ctc_loss(log_probs, flat, input_lengths, target_lengths, reduction="none"))
    show(F.ctc_loss(log_probs, padded, input_lengths.tolist(), target_lengths.tolist()))
    # the third sample needs 4 4 4 -> at least 5 frames with blanks between repeats; give it 4
    impossible = F.ctc_loss(logits.log_softmax(2), padded, torch.tensor([6, 5, 4]), target_lengths, reduction="none")
    show(impossible, torch.isinf(impossible))
    impossible.sum().backward()
    show(logits.grad[:, 2], torch.isnan(logits.grad).any())
    logits.grad = None
    safe = F.ctc_loss(logits.log_softmax(2), padded, input_lengths, target_lengths, reduction="mean", zero_infinity=True)
    safe.backward()
    show(safe, logits.grad[:, 2].abs().sum(), logits.grad[:, 0])
    logits.grad = None
    # blank last: the targets use 0..C-2
    ctc = nn.CTCLoss(blank=C - 1, reduction="sum", zero_infinity=True)
    show(ctc, ctc.blank, ctc.zero_infinity)
    log_probs = logits.log_softmax(2)
    loss = ctc(log_probs, padded.clamp(max=C - 2), input_lengths, target_lengths)
    loss.backward()
    show(loss, logits.grad.sum(2))
    show_outcome(show, lambda: F.ctc_loss(log_probs, padded, input_lengths, target_lengths, blank=C))
    show_outcome(show, lambda: F.ctc_loss(log_probs, padded, torch.tensor([7, 5, 4]), target_lengths))
    show_outcome(show, lambda: F.ctc_loss(log_probs, padded, input_lengths, torch.tensor([3, 2])))
    show_outcome(show, lambda: F.ctc_loss(log_probs, padded, input_lengths, target_lengths, reduction="avg"))
    show_outcome(show, lambda: F.ctc_loss(log_probs, padded.float(), input_lengths, target_lengths))
    show_outcome(show, lambda: F.ctc_loss(log_probs, padded, input_lengths, torch.tensor([3, 4, 3])))


def _ctc_greedy_decode(lib, show):
    """Greedy CTC decoding of a batch of frame posteriors: argmax per frame, runs collapsed with
    unique_consecutive (counts and inverse), blanks dropped, the decoded strings, and a check against the loss."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(402)
    alphabet = "_abc"
    frames = torch.tensor([[0, 1, 1, 0, 2, 2, 2, 0, 0, 1],
                           [3, 3, 0, 3, 0, 0, 1, 2, 2, 0]])
    logits = (F.one_hot(frames, 4).float() * 4 + torch.randn(2, 10, 4) * 0.5).requires_grad_()
    best = logits.argmax(-1)
    show(best, best.equal(frames))
    decoded = []
    for row in best:
        runs, inverse, counts = torch.unique_consecutive(row, return_inverse=True, return_counts=True)
        kept = runs[runs != 0]
        decoded.append("".join(alphabet[i] for i in kept.tolist()))
        show(runs, inverse, counts, counts.sum(), kept)
    show(decoded)
    show(torch.unique_consecutive(best, dim=1), torch.unique_consecutive(torch.tensor([2, 2, 1, 1, 2])))
    show(torch.unique_consecutive(torch.tensor([], dtype=torch.long), return_counts=True))
    show(best.unique_consecutive(return_counts=True, dim=0))
    targets = [torch.tensor([1, 2, 1]), torch.tensor([3, 3, 1, 2])]
    log_probs = logits.log_softmax(-1).transpose(0, 1)
    lengths = torch.tensor([len(t) for t in targets])
    loss = F.ctc_loss(log_probs, torch.cat(targets), torch.full((2,), 10), lengths, reduction="none")
    show(loss, loss.grad_fn.name(), (loss / lengths).mean())
    loss.sum().backward()
    show(logits.grad[1], logits.grad.sum(-1).abs().max() < 1e-5)
    show_outcome(show, lambda: torch.unique_consecutive(best, dim=2))
    show_outcome(show, lambda: torch.unique_consecutive(best[:, :0], dim=0))
    show_outcome(show, lambda: torch.unique_consecutive(best[0, 0], dim=0))
    show(torch.unique_consecutive(best[:0], dim=0, return_counts=True))


def _lstm_projection_bidirectional(lib, show):
    """A two-layer bidirectional LSTM with proj_size: the output and h_n/c_n shapes, the layout of h_n as
    (layers, directions), the last step of the output against h_n, batch_first, its parameters, and the
    refusals of a wrong h0/c0."""
    torch, nn = lib, lib.nn
    torch.manual_seed(403)
    lstm = nn.LSTM(4, 6, num_layers=2, bidirectional=True, proj_size=3)
    show(lstm)
    show([(name, tuple(p.shape)) for name, p in lstm.named_parameters()][:6])
    show(len(lstm.all_weights), [len(w) for w in lstm.all_weights], lstm._flat_weights_names[-5:])
    x = torch.randn(5, 2, 4)
    out, (h_n, c_n) = lstm(x)
    show(out.shape, h_n.shape, c_n.shape, out.grad_fn.name())
    layers = h_n.view(2, 2, 2, 3)
    show(torch.allclose(out[-1, :, :3], layers[-1, 0]), torch.allclose(out[0, :, 3:], layers[-1, 1]))
    show(out[-1], h_n[-2:])
    h0 = torch.zeros(4, 2, 3)
    c0 = torch.zeros(4, 2, 6)
    again, _ = lstm(x, (h0, c0))
    show(torch.allclose(again, out))
    first = nn.LSTM(4, 6, num_layers=2, bidirectional=True, proj_size=3, batch_first=True)
    first.load_state_dict(lstm.state_dict())
    out_bf, (h_bf, _) = first(x.transpose(0, 1))
    show(out_bf.shape, torch.allclose(out_bf.transpose(0, 1), out), torch.allclose(h_bf, h_n))
    out.sum().backward()
    show(lstm.weight_hr_l0.grad.shape, lstm.weight_hr_l1_reverse.grad.abs().sum() > 0)
    show_outcome(show, lambda: lstm(x, (torch.zeros(4, 2, 6), c0)))
    show_outcome(show, lambda: lstm(x, (h0, torch.zeros(4, 2, 3))))
    show_outcome(show, lambda: lstm(x, (torch.zeros(2, 2, 3), c0)))
    show_outcome(show, lambda: lstm(x, (h0.double(), c0)))
    show_outcome(show, lambda: lstm(x.double()))
    show_outcome(show, lambda: lstm(torch.randn(5, 2, 3)))
    show_outcome(show, lambda: lstm(x, h0))
    show_outcome(show, lambda: nn.LSTM(4, 6, proj_size=6))
    show_outcome(show, lambda: nn.LSTM(4, 6, proj_size=-1))
    show_outcome(show, lambda: nn.GRU(4, 6, proj_size=2))


def _lstm_dropout_between_layers(lib, show):
    """Dropout between stacked LSTM layers: the warning for a single layer, outputs that differ between train and
    eval and repeat under the same seed, and the unbatched 2-d input."""
    torch, nn = lib, lib.nn
    torch.manual_seed(404)
    lonely = nn.LSTM(3, 4, dropout=0.3)
    show(lonely.dropout, lonely.num_layers)
    lstm = nn.LSTM(3, 4, num_layers=3, dropout=0.5)
    x = torch.randn(6, 2, 3)
    torch.manual_seed(7)
    a, _ = lstm(x)
    torch.manual_seed(7)
    b, _ = lstm(x)
    c, _ = lstm(x)
    show(torch.equal(a, b), torch.equal(a, c))
    lstm.eval()
    e1, (h1, _) = lstm(x)
    e2, _ = lstm(x)
    show(torch.equal(e1, e2), e1[-1], h1.shape)
    single, (hs, cs) = lstm(x[:, 0])
    show(single.shape, hs.shape, cs.shape, torch.allclose(single, e1[:, 0], atol=1e-6))
    show_outcome(show, lambda: nn.LSTM(3, 4, dropout=1.5))
    show_outcome(show, lambda: nn.LSTM(3, 4, dropout=True))
    show_outcome(show, lambda: nn.LSTM(3, 0))
    show_outcome(show, lambda: nn.LSTM(3, 4, num_layers=0))
    show_outcome(show, lambda: lstm(x[:, 0], (torch.zeros(3, 1, 4), torch.zeros(3, 1, 4))))
    show_outcome(show, lambda: lstm(torch.randn(2, 2, 2, 3)))


def _relu_rnn(lib, show):
    """nn.RNN with nonlinearity='relu' unrolled by hand with the same weights, its gradient against the manual
    loop's, an RNNCell with relu, and the refusal of an unknown nonlinearity."""
    torch, nn = lib, lib.nn
    torch.manual_seed(405)
    rnn = nn.RNN(3, 5, num_layers=2, nonlinearity="relu", batch_first=True)
    show(rnn, rnn.mode, rnn.nonlinearity)
    x = torch.randn(2, 4, 3, requires_grad=True)
    out, h_n = rnn(x)
    show(out.grad_fn.name(), out.shape, h_n.shape, (out >= 0).all())

    def manual(inputs):
        layer_in = inputs
        finals = []
        for layer in range(2):
            w_ih, w_hh = getattr(rnn, f"weight_ih_l{layer}"), getattr(rnn, f"weight_hh_l{layer}")
            b_ih, b_hh = getattr(rnn, f"bias_ih_l{layer}"), getattr(rnn, f"bias_hh_l{layer}")
            h = torch.zeros(inputs.shape[0], 5)
            outs = []
            for t in range(inputs.shape[1]):
                h = torch.relu(layer_in[:, t] @ w_ih.T + b_ih + h @ w_hh.T + b_hh)
                outs.append(h)
            layer_in = torch.stack(outs, 1)
            finals.append(h)
        return layer_in, torch.stack(finals)

    m_out, m_h = manual(x)
    show(torch.allclose(out, m_out, atol=1e-6), torch.allclose(h_n, m_h, atol=1e-6))
    g_module, = torch.autograd.grad(out.pow(2).sum(), x)
    g_manual, = torch.autograd.grad(m_out.pow(2).sum(), x)
    show(g_module, torch.allclose(g_module, g_manual, atol=1e-5))
    cell = nn.RNNCell(3, 5, nonlinearity="relu")
    show(cell, cell(x[:, 0]).grad_fn.name(), nn.RNNCell(3, 5)(x[:, 0]).grad_fn.name())
    show_outcome(show, lambda: nn.RNN(3, 5, nonlinearity="gelu"))
    show_outcome(show, lambda: nn.RNN(3, True, nonlinearity="relu"))
    show_outcome(show, lambda: nn.RNNCell(3, 5, nonlinearity="sigmoid"))
    show_outcome(show, lambda: rnn(x, torch.zeros(2, 5)))
    show_outcome(show, lambda: cell(x))


def _cells_against_modules(lib, show):
    """RNNCell/LSTMCell/GRUCell unrolled by hand with the weights copied from a bidirectional module (the forward
    direction and ``*_reverse``), flatten_parameters, all_weights and the refusals of a cell's state."""
    torch, nn = lib, lib.nn
    torch.manual_seed(406)
    x = torch.randn(5, 2, 3)
    for module_cls, cell_cls in ((nn.RNN, nn.RNNCell), (nn.LSTM, nn.LSTMCell), (nn.GRU, nn.GRUCell)):
        module = module_cls(3, 4, bidirectional=True)
        module.flatten_parameters()
        out, state = module(x)
        fwd, bwd = cell_cls(3, 4), cell_cls(3, 4)
        with torch.no_grad():
            for cell, suffix in ((fwd, ""), (bwd, "_reverse")):
                for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                    getattr(cell, kind).copy_(getattr(module, f"{kind}_l0{suffix}"))
        outs_f, outs_b = [], [None] * 5
        hf = hb = None
        for t in range(5):
            hf = fwd(x[t], hf)
            outs_f.append(hf[0] if isinstance(hf, tuple) else hf)
        for t in reversed(range(5)):
            hb = bwd(x[t], hb)
            outs_b[t] = hb[0] if isinstance(hb, tuple) else hb
        by_hand = torch.cat([torch.stack(outs_f), torch.stack(outs_b)], dim=2)
        show(module_cls.__name__, out.grad_fn.name(), by_hand.grad_fn.name(), torch.allclose(out, by_hand, atol=1e-6))
        show([n for n, _ in module.named_parameters()], [tuple(w.shape) for w in module.all_weights[1]])
    lstm_cell = nn.LSTMCell(3, 4)
    show(lstm_cell, lstm_cell.weight_ih.shape, lstm_cell(x[0])[1].shape)
    show_outcome(show, lambda: lstm_cell(x[0], (torch.zeros(2, 4),)))
    show_outcome(show, lambda: lstm_cell(x[0], (torch.zeros(3, 4), torch.zeros(3, 4))))
    show_outcome(show, lambda: nn.GRUCell(3, 4)(x[0], torch.zeros(2, 5)))
    show_outcome(show, lambda: nn.GRUCell(3, 4)(x[0].double()))
    show_outcome(show, lambda: nn.GRUCell(3, 4)(x))
    show(nn.GRUCell(3, 4)(x[0, 0]).shape, nn.LSTMCell(3, 4, bias=False).bias_ih)


def _packing_and_padding(lib, show):
    """Variable-length batches: pad_sequence (batch_first, padding_value, padding_side='left'), packing sorted
    and unsorted and the refusal of unsorted lengths, pad_packed_sequence with total_length, unpad_sequence and
    unpack_sequence, and a packed GRU whose padded positions get no gradient."""
    torch, nn = lib, lib.nn
    rnn_utils = nn.utils.rnn
    torch.manual_seed(407)
    seqs = [torch.randn(n, 2) for n in (3, 5, 2)]
    lengths = torch.tensor([3, 5, 2])
    show(rnn_utils.pad_sequence(seqs).shape, rnn_utils.pad_sequence(seqs, batch_first=True, padding_value=-1.0))
    show(rnn_utils.pad_sequence(seqs, batch_first=True, padding_side="left")[:, :, 0])
    show(rnn_utils.pad_sequence([torch.tensor([1, 2]), torch.tensor([3])], padding_value=9, padding_side="left"))
    padded = rnn_utils.pad_sequence(seqs, batch_first=True)
    packed = rnn_utils.pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
    show(packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices, packed.data.shape)
    back, back_lengths = rnn_utils.pad_packed_sequence(packed, batch_first=True, total_length=7)
    show(back.shape, back_lengths, torch.equal(back[:, :5], padded))
    order = lengths.argsort(descending=True)
    sorted_packed = rnn_utils.pack_padded_sequence(padded[order], lengths[order], batch_first=True)
    show(sorted_packed.sorted_indices, torch.equal(sorted_packed.data, packed.data))
    show(rnn_utils.unpad_sequence(padded, lengths, batch_first=True)[2])
    show([s.shape for s in rnn_utils.unpack_sequence(packed)])
    listed = rnn_utils.pack_sequence(seqs, enforce_sorted=False)
    show(listed.batch_sizes, torch.equal(listed.data, packed.data))
    show_outcome(show, lambda: rnn_utils.pack_padded_sequence(padded, lengths, batch_first=True))
    show_outcome(show, lambda: rnn_utils.pad_packed_sequence(packed, total_length=4))
    show_outcome(show, lambda: rnn_utils.pack_padded_sequence(padded, torch.tensor([3, 0, 2]), batch_first=True,
                                                              enforce_sorted=False))
    show_outcome(show, lambda: rnn_utils.pad_sequence(seqs, padding_side="middle"))
    show_outcome(show, lambda: rnn_utils.pack_sequence(seqs))
    show_outcome(show, lambda: rnn_utils.pad_sequence([s[0, 0] for s in seqs]))
    show_outcome(show, lambda: rnn_utils.pack_padded_sequence(seqs[1][:, 0], [5]))
    show_outcome(show, lambda: rnn_utils.pack_padded_sequence(seqs[1][:, 0], [5], batch_first=True))
    inputs = padded.clone().requires_grad_()
    gru = nn.GRU(2, 3, batch_first=True, bidirectional=True)
    out, h_n = gru(rnn_utils.pack_padded_sequence(inputs, lengths, batch_first=True, enforce_sorted=False))
    unpacked, _ = rnn_utils.pad_packed_sequence(out, batch_first=True)
    show(type(out).__name__, unpacked.shape, h_n.shape, unpacked[2, 2:])
    unpacked.sum().backward()
    show(inputs.grad[2, 2:], inputs.grad[0, 3:].abs().sum(), inputs.grad[1].abs().sum() > 0)
    show(torch.allclose(h_n[0, 2], unpacked[2, 1, :3]), torch.allclose(h_n[1, 2], unpacked[2, 0, 3:]))


def _attention_over_encoder(lib, show):
    """Additive (Bahdanau) and dot-product (Luong) attention of a decoder state over padded encoder outputs:
    scores by bmm and by a tanh layer, a masked softmax, context vectors, gradients, and a fully masked row."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(408)
    B, S, H = 2, 4, 3
    enc = torch.randn(B, S, H, requires_grad=True)
    dec = torch.randn(B, H, requires_grad=True)
    lengths = torch.tensor([4, 2])
    mask = torch.arange(S).unsqueeze(0) >= lengths.unsqueeze(1)
    show(mask)
    dot = torch.bmm(enc, dec.unsqueeze(2)).squeeze(2)
    dot = dot.masked_fill(mask, float("-inf"))
    weights = F.softmax(dot, dim=1)
    context = torch.bmm(weights.unsqueeze(1), enc).squeeze(1)
    show(dot, weights, context, weights.sum(1))
    W_q, W_k, v = nn.Linear(H, 5, bias=False), nn.Linear(H, 5), nn.Linear(5, 1, bias=False)
    energy = v(torch.tanh(W_q(dec).unsqueeze(1) + W_k(enc))).squeeze(-1)
    additive = energy.masked_fill(mask, -1e9).softmax(-1)
    ctx2 = (additive.unsqueeze(-1) * enc).sum(1)
    show(energy.grad_fn.name(), additive, ctx2)
    (context.sum() + ctx2.pow(2).sum()).backward()
    show(enc.grad[1, 2:], dec.grad, W_k.bias.grad)
    general = nn.Bilinear(H, H, 1)
    show(general(dec.unsqueeze(1).expand(B, S, H), enc).squeeze(-1).shape)
    empty = torch.full((1, S), float("-inf")).softmax(-1)
    show(empty, torch.nan_to_num(empty))
    show_outcome(show, lambda: torch.bmm(enc, dec))
    show_outcome(show, lambda: torch.bmm(enc, dec.unsqueeze(1)))
    show_outcome(show, lambda: dot.masked_fill(mask.float(), 0.0))
    show_outcome(show, lambda: dot.masked_fill(mask[:, :3], 0.0))


def _teacher_forcing_seq2seq(lib, show):
    """A GRU encoder-decoder trained a few steps with teacher forcing decided by a seeded coin flip, the RNN's
    gradients clipped by norm and by value, and greedy decoding afterwards."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(409)
    vocab, hidden, bos = 6, 8, 0

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden)
            self.encoder = nn.GRU(hidden, hidden, batch_first=True)
            self.decoder = nn.GRUCell(hidden, hidden)
            self.out = nn.Linear(hidden, vocab)

        def forward(self, src, tgt, ratio):
            _, h = self.encoder(self.embed(src))
            h = h.squeeze(0)
            token = torch.full((src.shape[0],), bos, dtype=torch.long)
            logits, coins = [], []
            for t in range(tgt.shape[1]):
                h = self.decoder(self.embed(token), h)
                step = self.out(h)
                logits.append(step)
                teach = torch.rand(1).item() < ratio
                coins.append(teach)
                token = tgt[:, t] if teach else step.argmax(-1)
            return torch.stack(logits, 1), coins

    model = Seq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    src = torch.randint(1, vocab, (3, 4))
    tgt = src.flip(1)
    for epoch in range(4):
        opt.zero_grad()
        logits, coins = model(src, tgt, ratio=0.5)
        loss = F.cross_entropy(logits.reshape(-1, vocab), tgt.reshape(-1))
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.encoder.parameters(), max_norm=0.5)
        nn.utils.clip_grad_value_(model.decoder.parameters(), clip_value=0.05)
        opt.step()
        show(epoch, coins, round(loss.item(), 4), norm, model.decoder.weight_hh.grad.abs().max())
    total = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.encoder.parameters()]))
    show(total, norm.dtype, norm.grad_fn)
    with torch.no_grad():
        logits, coins = model(src, tgt, ratio=0.0)
    show(logits.argmax(-1), tgt, coins)
    model.encoder.weight_hh_l0.grad.fill_(float("inf"))
    show_outcome(show, lambda: nn.utils.clip_grad_norm_(model.encoder.parameters(), 1.0, error_if_nonfinite=True))
    show(nn.utils.clip_grad_norm_(model.encoder.parameters(), 1.0))
    show(nn.utils.get_total_norm([p.grad for p in model.decoder.parameters()], norm_type=float("inf")))


def _gru_equations_and_batch_layout(lib, show):
    """A GRU's gates written out by hand (the reset gate applied after the hidden product, as PyTorch does), the
    bias-free and unbatched variants, h_n of a stacked batch_first GRU, and the refusals of a GRU's h0."""
    torch, nn = lib, lib.nn
    torch.manual_seed(410)
    gru = nn.GRU(3, 2, num_layers=2, batch_first=True)
    x = torch.randn(2, 4, 3)
    out, h_n = gru(x)
    w_ir, w_iz, w_in = gru.weight_ih_l0.chunk(3)
    w_hr, w_hz, w_hn = gru.weight_hh_l0.chunk(3)
    b_ir, b_iz, b_in = gru.bias_ih_l0.chunk(3)
    b_hr, b_hz, b_hn = gru.bias_hh_l0.chunk(3)
    h = torch.zeros(2, 2)
    for t in range(4):
        xt = x[:, t]
        r = torch.sigmoid(xt @ w_ir.T + b_ir + h @ w_hr.T + b_hr)
        z = torch.sigmoid(xt @ w_iz.T + b_iz + h @ w_hz.T + b_hz)
        n = torch.tanh(xt @ w_in.T + b_in + r * (h @ w_hn.T + b_hn))
        h = (1 - z) * n + z * h
    first_layer, _ = nn.GRU(3, 2, batch_first=True)(x)
    show(h, h_n[0], torch.allclose(h, h_n[0], atol=1e-6), first_layer.shape)
    show(out[:, -1], h_n[-1], torch.equal(out[:, -1], h_n[-1]))
    nobias = nn.GRU(3, 2, bias=False)
    show([n for n, _ in nobias.named_parameters()], nobias(x[0])[0].shape, nobias(x[0])[1].shape)
    show_outcome(show, lambda: gru(x, torch.zeros(2, 2, 2, 2)))
    show_outcome(show, lambda: gru(x, torch.zeros(2, 3, 2)))
    show_outcome(show, lambda: gru(x, (torch.zeros(2, 2, 2), torch.zeros(2, 2, 2))))
    show_outcome(show, lambda: gru(x[0], torch.zeros(2, 2, 2)))
    show_outcome(show, lambda: gru(x.long()))
    show_outcome(show, lambda: nn.GRU(3, 2.5))
    half = nn.GRU(3, 2).double()
    show(half(x.double())[0].dtype, half.weight_ih_l0.dtype)


PROGRAMS = [
    _beam_search_gru,
    _ctc_loss_every_way,
    _ctc_greedy_decode,
    _lstm_projection_bidirectional,
    _lstm_dropout_between_layers,
    _relu_rnn,
    _cells_against_modules,
    _packing_and_padding,
    _attention_over_encoder,
    _teacher_forcing_seq2seq,
    _gru_equations_and_batch_layout,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)

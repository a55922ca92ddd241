"""Variable-length sequences for the recurrent layers: :class:`PackedSequence` and its (un)packing and padding
helpers, as ``torch.nn.utils.rnn`` defines them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from ..._factories import arange, full, tensor
from ..._tensor import Tensor
from ...backend.dtypes import float16, float32, float64, int8, int16, int32, int64, uint8
from ...ops.nn_ops import rnn as _rnn

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(PackedSequence_):
    """The time steps of a batch of sequences, sorted by decreasing length, one step after another:
    ``data`` has ``batch_sizes[t]`` rows for step ``t``."""

    def __new__(cls, data, batch_sizes: Tensor | None = None, sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                    "manually. They should be instantiated by functions like pack_sequence and "
                    "pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence"
                )
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        if not (isinstance(data, (list, tuple)) and len(data) == 2):
            raise AssertionError("Expected data to be a list or tuple of length 2")
        return super().__new__(cls, data[0], data[1], sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self

        def move(t: Tensor | None) -> Tensor | None:
            return None if t is None else t.to(data.device)

        return type(self)(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def _to_device_type(self, device_type: str, args: tuple, kwargs: dict) -> PackedSequence:
        """``to(*args, **kwargs)``, sent to ``device_type`` unless the arguments already lead there (torch's
        ``cuda()``/``cpu()``)."""
        if self.data.new_empty(0).to(*args, **kwargs).device.type != device_type:
            kwargs["device"] = device_type
        return self.to(*args, **kwargs)

    def cuda(self, *args, **kwargs) -> PackedSequence:
        return self._to_device_type("cuda", args, kwargs)

    def cpu(self, *args, **kwargs) -> PackedSequence:
        return self._to_device_type("cpu", args, kwargs)

    def pin_memory(self) -> PackedSequence:
        def pin(t: Tensor | None) -> Tensor | None:
            return None if t is None else t.pin_memory()

        return type(self)(self.data.pin_memory(), self.batch_sizes, pin(self.sorted_indices),
                          pin(self.unsorted_indices))

    def double(self) -> PackedSequence:
        return self.to(dtype=float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=int32)

    def short(self) -> PackedSequence:
        return self.to(dtype=int16)

    def char(self) -> PackedSequence:
        return self.to(dtype=int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=uint8)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return self.data.is_pinned()


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    if permutation is None:
        return None
    output = permutation.new_empty(permutation.shape)
    output.scatter_(0, permutation, arange(0, permutation.numel(), device=permutation.device))
    return output


def _as_lengths(lengths) -> Tensor:
    if isinstance(lengths, Tensor):
        return lengths.to(dtype=int64)
    return tensor(lengths, dtype=int64)


def pack_padded_sequence(input: Tensor, lengths: Tensor | list[int], batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (``T x B x *``, or ``B x T x *`` with ``batch_first``) of sequences of the given
    lengths; with ``enforce_sorted=False`` the batch is sorted by decreasing length first."""
    lengths = _as_lengths(lengths)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = lengths.sort(descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _rnn.pack_padded(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The inverse of :func:`pack_padded_sequence`: the padded batch and each sequence's length."""
    max_seq_length = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in input, but got "
                f"total_length={total_length} and max sequence length being {max_seq_length}"
            )
        max_seq_length = total_length
    sizes = [int(b) for b in sequence.batch_sizes.tolist()]
    padded, lengths = _rnn.pad_packed(sequence.data, sizes, batch_first, padding_value, max_seq_length)
    lengths_t = tensor(lengths, dtype=int64)
    if sequence.unsorted_indices is not None:
        batch_dim = 0 if batch_first else 1
        return padded.index_select(batch_dim, sequence.unsorted_indices), lengths_t[sequence.unsorted_indices.cpu()]
    return padded, lengths_t


def pad_sequence(sequences: Tensor | list[Tensor], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences of different lengths (``L_i x *``) into ``max(L) x B x *`` (``B x max(L) x *`` with
    ``batch_first``), padding on ``padding_side``; each sequence is copied in place into its slot."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    first = sequences[0]
    if first.dim() == 0:  # (ATen slices the trailing sizes off the first sequence's before it reads any length)
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    max_len = max(s.size(0) for s in sequences)
    lead = (len(sequences), max_len) if batch_first else (max_len, len(sequences))
    out = full(lead + tuple(first.shape[1:]), padding_value, dtype=first.dtype, device=first.device)
    for i, seq in enumerate(sequences):
        length = seq.size(0)
        start = max_len - length if padding_side == "left" else 0
        if batch_first:
            out.select(0, i).narrow(0, start, length).copy_(seq)
        else:
            out.narrow(0, start, length).select(1, i).copy_(seq)
    return out


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False) -> list[Tensor]:
    """The sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    idx = arange(padded_sequences.shape[1], device=lengths.device)
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences of different lengths."""
    lengths = tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The inverse of :func:`pack_sequence`."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

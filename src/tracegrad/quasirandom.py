"""``torch.quasirandom``: the Sobol sequence engine, drawing the very points PyTorch's does (scrambled ones too, from
the same generator draws). The state arithmetic lives in the ``_sobol_engine_*`` operators (``ops/sobol.py``)."""

from __future__ import annotations

import tracegrad as torch

__all__ = ["SobolEngine"]


class SobolEngine:
    r"""An engine for (scrambled) Sobol sequences, low discrepancy quasi-random points in up to 21201 dimensions,
    with Joe and Kuo's direction numbers (search criterion D(6)).

    Args:
        dimension (Int): The dimensionality of the sequence to be drawn
        scramble (bool, optional): Owen's scrambling: a random linear matrix and digital shift. Default: ``False``.
        seed (Int, optional): The seed of the scrambling's generator; without one, the default generator draws.
    """

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError(f"Supported range of dimensionality for SobolEngine is [1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension

        cpu = torch.device("cpu")
        self.sobolstate = torch.zeros(dimension, self.MAXBIT, device=cpu, dtype=torch.long)
        torch._sobol_engine_initialize_state_(self.sobolstate, self.dimension)
        if self.scramble:
            self._scramble()
        else:
            self.shift = torch.zeros(self.dimension, device=cpu, dtype=torch.long)
        self.quasi = self.shift.clone(memory_format=torch.contiguous_format)
        # (in the default dtype of the time the engine is made, whatever dtype a later draw asks for)
        self._first_point = (self.quasi / 2**self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    def draw(self, n: int = 1, out: torch.Tensor | None = None, dtype: torch.dtype | None = None) -> torch.Tensor:
        r"""Draw the next :attr:`n` points of the sequence, a tensor of shape ``(n, dimension)``.

        Args:
            n (Int, optional): The length of sequence of points to draw. Default: 1
            out (Tensor, optional): The output tensor
            dtype (:class:`torch.dtype`, optional): the desired data type of the returned tensor.
                Default: the default dtype.
        """
        if dtype is None:
            dtype = torch.get_default_dtype()
        if self.num_generated == 0:
            # The first point is the shift itself; the sequence goes on from index 0.
            if n == 1:
                result = self._first_point.to(dtype)
            else:
                result, self.quasi = torch._sobol_engine_draw(self.quasi, n - 1, self.sobolstate, self.dimension,
                                                              self.num_generated, dtype=dtype)
                result = torch.cat((self._first_point.to(dtype), result), dim=-2)
        else:
            result, self.quasi = torch._sobol_engine_draw(self.quasi, n, self.sobolstate, self.dimension,
                                                          self.num_generated - 1, dtype=dtype)
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m: int, out: torch.Tensor | None = None, dtype: torch.dtype | None = None) -> torch.Tensor:
        r"""Draw the next ``2**m`` points, refused unless the points drawn in all stay a power of 2 (the balance
        properties of Sobol' points need it).

        Args:
            m (Int): The (base2) exponent of the number of points to draw.
            out (Tensor, optional): The output tensor
            dtype (:class:`torch.dtype`, optional): the desired data type of the returned tensor.
        """
        n = 2**m
        total_n = self.num_generated + n
        if total_n & (total_n - 1) != 0:
            raise ValueError(
                "The balance properties of Sobol' points require "
                f"n to be a power of 2. {self.num_generated} points have been "
                f"previously generated, then: n={self.num_generated}+2**{m}={total_n}. "
                "If you still want to do this, please use "
                "'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self) -> SobolEngine:
        r"""Go back to the first point."""
        self.quasi.copy_(self.shift)
        self.num_generated = 0
        return self

    def fast_forward(self, n) -> SobolEngine:
        r"""Skip :attr:`n` points, as drawing them would.

        Args:
            n (Int): The number of steps to fast-forward by.
        """
        if self.num_generated == 0:
            torch._sobol_engine_ff_(self.quasi, n - 1, self.sobolstate, self.dimension, self.num_generated)
        else:
            torch._sobol_engine_ff_(self.quasi, n, self.sobolstate, self.dimension, self.num_generated - 1)
        self.num_generated += n
        return self

    def _scramble(self) -> None:
        """The random digital shift and lower triangular matrices, drawn in PyTorch's order from a generator seeded
        with ``seed`` (or from the default generator)."""
        generator = None
        if self.seed is not None:
            generator = torch.Generator()
            generator.manual_seed(self.seed)
        cpu = torch.device("cpu")
        shift_bits = torch.randint(2, (self.dimension, self.MAXBIT), device=cpu, generator=generator)
        self.shift = torch.mv(shift_bits, torch.pow(2, torch.arange(0, self.MAXBIT, device=cpu)))
        ltm_dims = (self.dimension, self.MAXBIT, self.MAXBIT)
        ltm = torch.randint(2, ltm_dims, device=cpu, generator=generator).tril()
        torch._sobol_engine_scramble_(self.sobolstate, ltm, self.dimension)

    def __repr__(self) -> str:
        fields = [f"dimension={self.dimension}"]
        if self.scramble:
            fields.append("scramble=True")
        if self.seed is not None:
            fields.append(f"seed={self.seed}")
        return f"{self.__class__.__name__}({', '.join(fields)})"

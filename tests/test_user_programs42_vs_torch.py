"""A forty-second set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run (set 6 flipped, rolled and padded one image; set 12 cropped
ROIs through grid_sample and mixed batches in a focal loss): data-augmentation pipelines written on tensors,
without torchvision. uint8 images converted to float and back (``div(255)``, ``mul(255).round().clamp(0,
255).to(torch.uint8)``, truncation) with byte arithmetic wrapping and in-place refusals; random crops and flips
from a seeded Generator replayed from its saved state; RandomResizedCrop by hand through ``F.interpolate`` in every
mode (align_corners, antialias on float, uint8 nearest/bilinear/bicubic); rotations and shears by affine_grid +
grid_sample in every padding mode and both corner conventions, 2-d and 3-d; ``F.pad``'s modes on 3-d/4-d/5-d
inputs with negative pads, their gradients and refusals; colour jitter against a grayscale and per-channel
normalisation; a Gaussian blur by grouped conv2d, separable and full; cutout (masked_fill_, index_put_), mixup
with a Beta sample and cutmix boxes; RandAugment's ops on uint8 (posterize, solarize, equalize by bincount, ...);
FiveCrop/TenCrop by slicing and stack; pixel_shuffle/unshuffle and a channels_last batch through a whole pipeline
(strides printed); and gradients of an augmentation with respect to its parameters (a learnable affine theta
fitted by SGD from the identity, brightness/contrast factors). Everything is drawn from seeded generators, which
are torch's; programs without convolutions, resampling or matrix products are compared bit for bit, the others
(``APPROXIMATE``) to a tolerance.

Differences these programs found, now fixed (``tests/ops/test_program42_findings_vs_torch.py``):
- ``F.affine_grid`` was an ulp off torch's (NumPy's linspace for the base grid, a BLAS matmul with theta): at the
  identity the grid missed the pixel centres, and a spatial transformer's gradient with respect to theta read
  other neighbours (wholly different gradients, a different fit);
- ``F.adaptive_avg_pool2d(x, 1)`` (and the 3-d one) of a channels_last input came out contiguous with a
  MeanBackward1 node; torch restrides the mean to channels_last (AsStridedBackward1).

Left: ``F.interpolate(uint8, mode="bilinear"/"bicubic", antialias=True)`` raises NotImplementedError (torch's
16-bit fixed-point uint8 path is not reproduced).
"""

from __future__ import annotations

import math

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _uint8_round_trip(lib, show):
    """A uint8 image (C,H,W and N,C,H,W) turned into floats and back the usual ways, and the byte arithmetic that
    wraps around on the way."""
    torch = lib
    g = torch.Generator().manual_seed(4200)
    img = torch.randint(0, 256, (3, 4, 5), generator=g, dtype=torch.uint8)
    show(img, img.dtype, img.stride(), img.is_floating_point())
    as_float = img.div(255)
    show(as_float, as_float.dtype, (img / 255.0).dtype, img.float().div_(255).dtype)
    back = as_float.mul(255).round().clamp(0, 255).to(torch.uint8)
    show(back, torch.equal(back, img), (back.int() - img.int()).abs().max())
    truncated = (as_float * 255).to(torch.uint8)
    show(truncated, (truncated != img).sum(), (truncated != img).sum().dtype)
    show(img + 200, img - 100, img * 2, 255 - img, img // 3, img % 7)
    show(img + 200.0, (img + 200).dtype, (img + torch.tensor(200)).dtype, (img + torch.tensor(200.0)).dtype)
    show(img.sum(), img.sum().dtype, img.sum(dtype=torch.uint8), img.max(), img.float().mean())
    show_outcome(show, lambda: img.mean())
    show_outcome(show, lambda: img.clone().add_(0.5))
    show_outcome(show, lambda: img.clone().mul_(2))
    show_outcome(show, lambda: img.clone().div_(2))
    show_outcome(show, lambda: torch.clamp(img, -10, 300))
    show_outcome(show, lambda: (img.int() - 100).clamp(0, 255).byte())
    show_outcome(show, lambda: img.to(torch.float16).div(255).mul(255).round().to(torch.uint8))
    batch = torch.stack([img, img.flip(-1)])
    show(batch.shape, batch.stride(), batch.dtype)
    f = batch.to(torch.float32) / 255
    noisy = (f + 0.1 * torch.randn(f.shape, generator=g)).clamp(0, 1)
    out = (noisy * 255).round().to(torch.uint8)
    show(out, out.dtype, out.shape)
    show(torch.tensor([-1.0, 255.6, 256.0, 300.0, -0.4]).round().clamp(0, 255).to(torch.uint8))
    show(torch.tensor([250, 5], dtype=torch.uint8) + torch.tensor([10, -10], dtype=torch.int8))
    show(torch.tensor([250, 5], dtype=torch.uint8).to(torch.int8), torch.tensor([-6, 5], dtype=torch.int8).byte())
    show(img.float().div(255).dtype, img.double().div(255).dtype, img.div(255, rounding_mode="floor"))
    show_outcome(show, lambda: img.div(0))
    show_outcome(show, lambda: img // 0)


def _random_crop_and_flip(lib, show):
    """Random crops and horizontal/vertical flips drawn from a seeded Generator, replayed from its saved state,
    and the refusals of impossible crops."""
    torch = lib
    g = torch.Generator().manual_seed(4201)
    images = torch.arange(2 * 3 * 6 * 7, dtype=torch.float32).reshape(2, 3, 6, 7)

    def random_crop(img, size, gen):
        h, w = img.shape[-2:]
        top = torch.randint(0, h - size[0] + 1, size=(1,), generator=gen).item()
        left = torch.randint(0, w - size[1] + 1, size=(1,), generator=gen).item()
        return img[..., top:top + size[0], left:left + size[1]], (top, left)

    def random_flip(img, gen, p=0.5):
        flip_h = torch.rand(1, generator=gen) < p
        flip_v = torch.rand((), generator=gen).item() < p
        if flip_h:
            img = img.flip(-1)
        if flip_v:
            img = torch.flip(img, dims=[-2])
        return img, bool(flip_h), flip_v

    state = g.get_state()
    crops = []
    for img in images:
        crop, corner = random_crop(img, (4, 4), g)
        crop, fh, fv = random_flip(crop, g)
        show(corner, fh, fv, crop.shape, crop.is_contiguous(), crop.stride())
        crops.append(crop)
    batch = torch.stack(crops)
    show(batch, batch.stride())
    g.set_state(state)
    again, corner = random_crop(images[0], (4, 4), g)
    show(corner, torch.equal(again.flip(-1), crops[0]) or torch.equal(again, crops[0]) or again.shape)
    show(g.initial_seed(), state.dtype, state.shape)
    order = torch.randperm(5, generator=g)
    show(order, order.dtype, torch.randint(3, 10, (2, 3), generator=g))
    show(torch.randint(256, (4,), generator=g, dtype=torch.uint8), torch.rand(2, 2, generator=g, dtype=torch.float64))
    show_outcome(show, lambda: torch.randint(5, 5, (1,), generator=g))
    show_outcome(show, lambda: random_crop(images[0], (8, 4), g))
    show_outcome(show, lambda: torch.randint(0, 3, 2, generator=g))
    show_outcome(show, lambda: torch.rand(2, generator=torch.Generator().manual_seed(1)))
    show_outcome(show, lambda: torch.randint(0, 300, (2,), generator=g, dtype=torch.uint8))
    batch_flip = torch.rand(2, generator=g) < 0.5
    flipped = torch.where(batch_flip.view(-1, 1, 1, 1), images.flip(-1), images)
    show(batch_flip, flipped[:, 0, 0])


def _random_resized_crop(lib, show):
    """RandomResizedCrop written by hand: a scale and log-uniform aspect ratio drawn from a Generator, the box
    cut out and resized with F.interpolate in every mode, with antialias and align_corners, and its refusals."""
    torch, F = lib, lib.nn.functional
    g = torch.Generator().manual_seed(4202)
    img = torch.rand(1, 3, 12, 16, generator=g)
    area = 12 * 16
    log_ratio = (math.log(3 / 4), math.log(4 / 3))
    for _ in range(3):
        target_area = area * torch.empty(1).uniform_(0.3, 1.0, generator=g).item()
        ratio = math.exp(torch.empty(1).uniform_(*log_ratio, generator=g).item())
        w = int(round(math.sqrt(target_area * ratio)))
        h = int(round(math.sqrt(target_area / ratio)))
        if 0 < w <= 16 and 0 < h <= 12:
            break
    top = torch.randint(0, 12 - h + 1, (1,), generator=g).item()
    left = torch.randint(0, 16 - w + 1, (1,), generator=g).item()
    show(h, w, top, left)
    crop = img[:, :, top:top + h, left:left + w]
    for mode in ("nearest", "nearest-exact", "bilinear", "bicubic", "area"):
        out = F.interpolate(crop, size=(8, 8), mode=mode)
        show(mode, out[0, 0], out.shape, out.stride())
    for mode in ("bilinear", "bicubic"):
        show(mode, F.interpolate(crop, size=(5, 6), mode=mode, align_corners=True)[0, 1])
        show(mode, F.interpolate(crop, size=(5, 6), mode=mode, antialias=True)[0, 2])
    show(F.interpolate(img, scale_factor=0.5, mode="bilinear", antialias=True, recompute_scale_factor=True).shape)
    show(F.interpolate(img, scale_factor=(0.75, 0.4), mode="area")[0, 0])
    byte = (img * 255).round().to(torch.uint8)
    show(F.interpolate(byte, size=(6, 8), mode="nearest")[0, 0], F.interpolate(byte, size=(6, 8), mode="nearest-exact").dtype)
    show_outcome(show, lambda: F.interpolate(byte, size=(6, 8), mode="bilinear")[0, 0])
    show_outcome(show, lambda: F.interpolate(byte, size=(6, 8), mode="bicubic")[0, 1])
    show_outcome(show, lambda: F.interpolate(crop, size=(8, 8), mode="nearest", align_corners=True))
    show_outcome(show, lambda: F.interpolate(crop, size=(8, 8), mode="nearest", antialias=True))
    show_outcome(show, lambda: F.interpolate(crop, size=(8, 8), scale_factor=2.0))
    show_outcome(show, lambda: F.interpolate(crop, size=(8, 8, 8)))
    show_outcome(show, lambda: F.interpolate(crop[0], size=(8, 8), mode="bilinear"))
    show_outcome(show, lambda: F.interpolate(crop, mode="bilinear"))
    leaf = crop.clone().requires_grad_()
    up = F.interpolate(leaf, size=(9, 7), mode="bicubic", antialias=True)
    up.sum().backward()
    show(up.grad_fn.name(), leaf.grad[0, 0])


def _rotation_and_shear(lib, show):
    """Rotations and shears through affine_grid + grid_sample in every padding mode and both corner conventions,
    on a batch, with nearest and bicubic sampling and the refusals of a malformed theta."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(4203)
    img = torch.rand(2, 3, 5, 6)
    angle = torch.tensor([30.0, -45.0]) * math.pi / 180
    shear = torch.tensor([0.2, -0.1])
    cos, sin = angle.cos(), angle.sin()
    theta = torch.stack([
        torch.stack([cos, -sin + shear, torch.zeros(2)], dim=1),
        torch.stack([sin, cos, torch.full((2,), 0.1)], dim=1),
    ], dim=1)
    show(theta.shape, theta)
    for align in (False, True):
        grid = F.affine_grid(theta, list(img.shape), align_corners=align)
        show(align, grid.shape, grid.stride(), grid[0, 0])
        for padding in ("zeros", "border", "reflection"):
            out = F.grid_sample(img, grid, mode="bilinear", padding_mode=padding, align_corners=align)
            show(padding, out[0, 0], out[1, 2, 1])
        near = F.grid_sample(img, grid, mode="nearest", padding_mode="reflection", align_corners=align)
        show("nearest", near[1, 0])
    grid = F.affine_grid(theta, [2, 3, 4, 4], align_corners=False)
    show(F.grid_sample(img, grid, mode="bicubic", padding_mode="border", align_corners=False)[0, 1])
    identity = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]).expand(2, 2, 3)
    same = F.grid_sample(img, F.affine_grid(identity, list(img.shape), align_corners=False), align_corners=False)
    show(torch.allclose(same, img), (same - img).abs().max() < 1e-6)
    show_outcome(show, lambda: F.affine_grid(theta[:, :1], list(img.shape), align_corners=False))
    show_outcome(show, lambda: F.affine_grid(theta, [2, 3, 5], align_corners=False))
    show_outcome(show, lambda: F.affine_grid(theta.long(), list(img.shape), align_corners=False))
    show_outcome(show, lambda: F.grid_sample(img, grid, padding_mode="wrap", align_corners=False))
    show_outcome(show, lambda: F.grid_sample(img, grid, mode="area", align_corners=False))
    show_outcome(show, lambda: F.grid_sample(img[:1], grid, align_corners=False))
    show_outcome(show, lambda: F.grid_sample(img, grid[..., :1], align_corners=False))
    show_outcome(show, lambda: F.grid_sample(img, grid.double(), align_corners=False))
    vol = torch.rand(1, 1, 3, 4, 4)
    theta3 = torch.tensor([[[0.9, 0.1, 0.0, 0.0], [0.0, 1.0, 0.0, 0.1], [0.0, 0.0, 1.0, 0.0]]])
    g3 = F.affine_grid(theta3, [1, 1, 2, 3, 3], align_corners=True)
    show(g3.shape, F.grid_sample(vol, g3, padding_mode="border", align_corners=True)[0, 0])


def _pad_modes(lib, show):
    """F.pad's modes on 3-d, 4-d and 5-d inputs (constant with a value, reflect, replicate, circular, negative
    pads that crop), their gradients, and their refusals."""
    torch, F = lib, lib.nn.functional
    x3 = torch.arange(12.0).reshape(1, 2, 6)
    x4 = torch.arange(24.0).reshape(1, 2, 3, 4)
    x5 = torch.arange(36.0).reshape(1, 1, 3, 3, 4)
    for mode in ("constant", "reflect", "replicate", "circular"):
        show(mode, F.pad(x3, (2, 1), mode=mode))
        show(mode, F.pad(x4, (1, 2, 2, 1), mode=mode)[0, 1])
        out5 = F.pad(x5, (1, 1, 1, 0, 1, 1), mode=mode)
        show(mode, out5.shape, out5[0, 0, 0], out5[0, 0, -1])
    show(F.pad(x4, (1, 1, 1, 1), value=-1.5)[0, 0], F.pad(x4, (-1, 1, 0, -1))[0, 0])
    show(F.pad(x4, (-1, 1, 0, -1), mode="circular")[0, 0], F.pad(x4[0], (1, 1), mode="reflect").shape)
    show_outcome(show, lambda: F.pad(x4, (1, 1), mode="reflect"))
    byte = torch.arange(12, dtype=torch.uint8).reshape(1, 3, 4)
    show(F.pad(byte, (2, 2), mode="reflect"), F.pad(byte, (1, 1), value=255), F.pad(byte, (1, 1), mode="circular"))
    show_outcome(show, lambda: F.pad(byte, (1, 1), value=-1))
    show_outcome(show, lambda: F.pad(byte, (1, 1), value=0.5))
    leaf = torch.arange(8.0).reshape(1, 2, 4).requires_grad_()
    for mode in ("reflect", "replicate", "circular"):
        out = F.pad(leaf, (3, 2), mode=mode)
        (out * torch.arange(out.shape[-1], dtype=torch.float32)).sum().backward()
        show(mode, out.grad_fn.name(), leaf.grad)
        leaf.grad = None
    show_outcome(show, lambda: F.pad(x3, (6, 0), mode="reflect"))
    show_outcome(show, lambda: F.pad(x4, (1, 1, 3, 3), mode="reflect"))
    show_outcome(show, lambda: F.pad(x4, (5, 5), mode="circular"))
    show_outcome(show, lambda: F.pad(x4, (1, 2, 3), mode="constant"))
    show_outcome(show, lambda: F.pad(x3, (1, 1, 1, 1, 1, 1, 1, 1)))
    show_outcome(show, lambda: F.pad(x3, (1, 1, 1, 1), mode="replicate"))
    show_outcome(show, lambda: F.pad(torch.ones(2, 3), (1, 1), mode="reflect"))
    show_outcome(show, lambda: F.pad(x4, (1, 1), mode="wrap"))
    show_outcome(show, lambda: F.pad(x4, (1, 1), mode="reflect", value=2.0))
    show_outcome(show, lambda: F.pad(x3, (-7, 0)))


def _color_jitter_and_normalise(lib, show):
    """Colour jitter by hand (brightness, contrast and saturation blended against the image's grayscale, factors
    drawn from a Generator, clamp_), then per-channel normalisation with broadcasting and its inverse."""
    torch = lib
    g = torch.Generator().manual_seed(4204)
    img = torch.rand(2, 3, 4, 4, generator=g)
    weights = torch.tensor([0.299, 0.587, 0.114])

    def grayscale(x):
        r, gr, b = x.unbind(dim=-3)
        return (0.299 * r + 0.587 * gr + 0.114 * b).unsqueeze(-3)

    def blend(a, b, ratio):
        return (ratio * a + (1.0 - ratio) * b).clamp(0, 1)

    gray = grayscale(img)
    by_weights = (img * weights.view(3, 1, 1)).sum(dim=-3, keepdim=True)
    show(gray.shape, gray[0, 0], (gray - by_weights).abs().max() < 1e-6)
    factors = torch.empty(3).uniform_(0.6, 1.4, generator=g)
    show(factors)
    bright = blend(img, torch.zeros_like(img), factors[0].item())
    mean_gray = gray.mean(dim=(-3, -2, -1), keepdim=True)
    contrast = blend(bright, mean_gray, factors[1].item())
    saturated = blend(contrast, grayscale(contrast), factors[2].item())
    show(bright[0, 0], mean_gray.flatten(), contrast[1, 2], saturated[0, 1])
    jittered = saturated.clone()
    jittered[:, 0].mul_(1.5).clamp_(0, 1)
    jittered[1].sub_(0.3).clamp_(min=0)
    show(jittered[:, 0, 0], jittered.min(), jittered.max())
    mean = torch.tensor([0.485, 0.456, 0.406])
    std = torch.tensor([0.229, 0.224, 0.225])
    normed = (jittered - mean[:, None, None]) / std[:, None, None]
    show(normed[0, :, 0], normed.mean(dim=(0, 2, 3)), normed.std(dim=(0, 2, 3)))
    inplace = jittered.clone().sub_(mean.view(1, 3, 1, 1)).div_(std.view(1, 3, 1, 1))
    show(torch.equal(inplace, normed))
    restored = normed * std.view(-1, 1, 1) + mean.view(-1, 1, 1)
    show((restored - jittered).abs().max() < 1e-6)
    per_image = (img - img.mean(dim=(1, 2, 3), keepdim=True)) / img.std(dim=(1, 2, 3), keepdim=True)
    show(per_image[1, 0, 0], per_image.flatten(1).std(dim=1))
    show_outcome(show, lambda: img - mean)
    show_outcome(show, lambda: img.sub_(mean.view(3, 1)))
    show_outcome(show, lambda: img[0].clamp_(min=torch.tensor(0.2), max=0.8)[0, 0])
    show_outcome(show, lambda: img.clamp(torch.zeros(3, 1, 1), torch.tensor([0.5, 0.6, 0.7]).view(3, 1, 1))[1, :, 0])
    show_outcome(show, lambda: img.clamp())
    hsv_v = img.amax(dim=1)
    hsv_s = (hsv_v - img.amin(dim=1)) / hsv_v.clamp(min=1e-8)
    show(hsv_v[0], hsv_s[1])


def _gaussian_blur(lib, show):
    """Gaussian blur per channel: a 1-d kernel from its sigma, conv2d with groups=C as two separable passes and
    as one outer-product kernel, reflect-padded, and the refusals of a wrong kernel shape."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(4205)
    img = torch.rand(2, 3, 7, 8)

    def kernel1d(size, sigma):
        half = (size - 1) * 0.5
        xs = torch.linspace(-half, half, steps=size)
        k = torch.exp(-0.5 * (xs / sigma).pow(2))
        return k / k.sum()

    k = kernel1d(5, 1.2)
    show(k, k.sum())
    channels = img.shape[1]
    kx = k.view(1, 1, 1, 5).repeat(channels, 1, 1, 1)
    ky = k.view(1, 1, 5, 1).expand(channels, 1, 5, 1)
    padded = F.pad(img, (2, 2, 2, 2), mode="reflect")
    sep = F.conv2d(F.conv2d(padded, kx, groups=channels), ky, groups=channels)
    full_k = torch.outer(k, k).expand(channels, 1, 5, 5)
    full = F.conv2d(padded, full_k, groups=channels)
    show(sep.shape, sep[0, 0], full[1, 2])
    show((sep - full).abs().max() < 1e-6, kx.stride(), ky.stride(), full_k.is_contiguous())
    box = torch.ones(channels, 1, 3, 3) / 9
    show(F.conv2d(img, box, padding=1, groups=channels)[0, 1], F.avg_pool2d(img, 3, 1, 1)[0, 1])
    show(F.conv2d(img, box, padding="same", groups=channels).shape)
    sharp = (2 * img - sep).clamp(0, 1)
    show(sharp[1, 0])
    sigma = torch.tensor(1.0, requires_grad=True)
    xs = torch.arange(-2.0, 3.0)
    kk = torch.exp(-0.5 * (xs / sigma) ** 2)
    kk = kk / kk.sum()
    blurred = F.conv2d(padded, (kk[:, None] * kk[None, :]).expand(channels, 1, 5, 5), groups=channels)
    blurred.var().backward()
    show(blurred.grad_fn.name(), sigma.grad)
    show_outcome(show, lambda: F.conv2d(img, torch.ones(3, 3, 3), groups=channels))
    show_outcome(show, lambda: F.conv2d(img, torch.ones(2, 1, 3, 3), groups=channels))
    show_outcome(show, lambda: F.conv2d(img, torch.ones(3, 1, 3, 3), groups=2))
    show_outcome(show, lambda: F.conv2d(img, torch.ones(3, 1, 9, 9), groups=channels))
    show_outcome(show, lambda: F.conv2d(img, torch.ones(3, 1, 3, 3), groups=channels, padding="same", stride=2))
    show_outcome(show, lambda: F.conv2d(img.double(), box, groups=channels))


def _cutout_mixup_cutmix(lib, show):
    """Cutout by masked_fill_ and index_put_, mixup with a Beta sample drawn after torch.manual_seed, and cutmix
    boxes whose area corrects the mixing weight, with one-hot labels mixed to match."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(4206)
    images = torch.rand(4, 3, 8, 8)
    labels = torch.tensor([0, 2, 1, 2])
    g = torch.Generator().manual_seed(7)
    cy, cx = torch.randint(0, 8, (2,), generator=g).tolist()
    ys, xs = torch.arange(8).view(-1, 1), torch.arange(8).view(1, -1)
    hole = ((ys - cy).abs() <= 1) & ((xs - cx).abs() <= 1)
    cut = images.clone().masked_fill_(hole, 0.0)
    show(cy, cx, hole.sum(), cut[0, 0])
    cut2 = images.clone()
    rows, cols = hole.nonzero(as_tuple=True)
    cut2[:, :, rows, cols] = 0.5
    show(cut2[1, 1], rows, cols)
    cut3 = images[0].clone()
    cut3.index_put_((torch.tensor([0, 0, 2]), torch.tensor([1, 1, 3]), torch.tensor([2, 2, 4])), torch.tensor(9.0))
    cut3.index_put_((torch.tensor([1]), torch.tensor([0]), torch.tensor([0])), torch.tensor(1.0), accumulate=True)
    show(cut3[0], cut3[1, 0], cut3[2, 3])
    show_outcome(show, lambda: images.clone().masked_fill_(hole.float(), 0.0))
    show_outcome(show, lambda: images.clone().masked_fill_(hole[:7], 0.0))
    show_outcome(show, lambda: images.clone().masked_fill_(hole, torch.tensor([1.0, 2.0])))
    beta = torch.distributions.Beta(torch.tensor(0.4), torch.tensor(0.4))
    lam = beta.sample()
    perm = torch.randperm(4)
    show(lam, perm)
    mixed = lam * images + (1 - lam) * images[perm]
    onehot = F.one_hot(labels, num_classes=3).float()
    mixed_labels = lam * onehot + (1 - lam) * onehot[perm]
    show(mixed[2, 0, 0], mixed_labels)
    lam2 = torch.distributions.Beta(1.0, 1.0).sample((1,)).item()
    cut_ratio = math.sqrt(1.0 - lam2)
    h = w = int(8 * cut_ratio)
    bcy, bcx = torch.randint(8, (1,)).item(), torch.randint(8, (1,)).item()
    y1, y2 = max(bcy - h // 2, 0), min(bcy + h // 2, 8)
    x1, x2 = max(bcx - w // 2, 0), min(bcx + w // 2, 8)
    cutmix = images.clone()
    cutmix[:, :, y1:y2, x1:x2] = images[perm, :, y1:y2, x1:x2]
    lam_adjusted = 1 - (y2 - y1) * (x2 - x1) / 64
    show(round(lam2, 6), (y1, y2, x1, x2), lam_adjusted, cutmix[3, 2])
    logits = torch.randn(4, 3, requires_grad=True)
    loss = lam_adjusted * F.cross_entropy(logits, labels) + (1 - lam_adjusted) * F.cross_entropy(logits, labels[perm])
    soft = F.cross_entropy(logits, lam_adjusted * onehot + (1 - lam_adjusted) * onehot[perm])
    loss.backward()
    show(loss, soft, logits.grad)
    show(beta.log_prob(lam), beta.mean, beta.rsample().requires_grad)


def _randaugment(lib, show):
    """RandAugment on uint8 images: two ops chosen by torch.randint from a list, each with a magnitude (posterize
    by bitwise_and, solarize and invert, autocontrast by amin/amax, equalize by a histogram, rotate90, translate by
    roll, sharpness and brightness on the float image)."""
    torch = lib
    g = torch.Generator().manual_seed(4207)
    img = torch.randint(0, 256, (3, 5, 5), generator=g, dtype=torch.uint8)

    def posterize(x, bits):
        mask = -int(2 ** (8 - bits))
        return x & mask

    def solarize(x, threshold):
        return torch.where(x >= threshold, 255 - x, x)

    def invert(x):
        return ~x

    def autocontrast(x):
        lo = x.amin(dim=(-2, -1), keepdim=True).float()
        hi = x.amax(dim=(-2, -1), keepdim=True).float()
        scale = 255.0 / (hi - lo).clamp(min=1)
        return ((x.float() - lo) * scale).clamp(0, 255).to(torch.uint8)

    def equalize(x):
        out = []
        for ch in x:
            hist = torch.bincount(ch.flatten().long(), minlength=256)
            cdf = hist.cumsum(0)
            lut = ((cdf - cdf.min()) * 255 / (cdf.max() - cdf.min()).clamp(min=1)).round().clamp(0, 255).byte()
            out.append(lut[ch.long()])
        return torch.stack(out)

    def rotate90(x, k):
        return torch.rot90(x, k, dims=(-2, -1))

    def translate(x, shift):
        return torch.roll(x, shifts=(shift, -shift), dims=(-2, -1))

    def brightness(x, factor):
        return (x.float() * factor).round().clamp(0, 255).byte()

    ops = [posterize, solarize, invert, autocontrast, equalize, rotate90, translate, brightness]
    args = {posterize: 4, solarize: 128, rotate90: 1, translate: 2, brightness: 1.3}
    show(img[0], posterize(img, 3)[0], solarize(img, 100)[1], invert(img)[2], autocontrast(img)[0])
    show(equalize(img)[1], rotate90(img, -1)[0], translate(img, 1)[2], brightness(img, 0.7)[0])
    show(img & 0xF0, img | 1, img ^ 255, img >> 2, img << 1)
    show_outcome(show, lambda: img & -16)
    show_outcome(show, lambda: img.float() & 1)
    for _ in range(3):
        chosen = torch.randint(len(ops), (2,), generator=g)
        out = img
        for i in chosen.tolist():
            op = ops[i]
            out = op(out, args[op]) if op in args else op(out)
        show(chosen, [ops[i].__name__ for i in chosen], out[0], out.dtype)
    magnitude = torch.randint(0, 31, (), generator=g)
    show(magnitude, magnitude.dtype, magnitude.shape, (magnitude / 30).item())
    show_outcome(show, lambda: torch.bincount(img.flatten()))
    show_outcome(show, lambda: torch.bincount(img.flatten().long() - 1))
    show_outcome(show, lambda: torch.rot90(img, 1, dims=(0,)))


def _ten_crop_five_crop(lib, show):
    """FiveCrop and TenCrop by slicing corners and the centre (and their mirror images), stacked into a batch,
    scored by a small model and averaged over the crops, with stack's refusal of crops of unequal size."""
    torch, nn = lib, lib.nn
    torch.manual_seed(4208)
    batch = torch.rand(2, 3, 9, 10)

    def five_crop(img, size):
        h, w = img.shape[-2:]
        th, tw = size
        top, left = (h - th + 1) // 2, (w - tw + 1) // 2
        return (img[..., :th, :tw], img[..., :th, w - tw:], img[..., h - th:, :tw], img[..., h - th:, w - tw:],
                img[..., top:top + th, left:left + tw])

    def ten_crop(img, size, vertical=False):
        first = five_crop(img, size)
        flipped = img.flip(-2 if vertical else -1)
        return first + five_crop(flipped, size)

    crops = five_crop(batch[0], (5, 6))
    show([tuple(c.shape) for c in crops], [c.stride() for c in crops], crops[4][0])
    ten = ten_crop(batch[0], (5, 6))
    stacked = torch.stack(ten)
    show(stacked.shape, stacked.stride(), torch.equal(stacked[5], batch[0].flip(-1)[..., :5, :6]))
    vertical = torch.stack(ten_crop(batch[0], (4, 4), vertical=True))
    show(vertical[7, 1], vertical.is_contiguous())
    all_crops = torch.stack([torch.stack(ten_crop(img, (5, 6))) for img in batch])
    show(all_crops.shape)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2))
    bs, ncrops, c, h, w = all_crops.shape
    with torch.no_grad():
        logits = model(all_crops.view(-1, c, h, w))
    averaged = logits.view(bs, ncrops, -1).mean(1)
    show(logits.shape, averaged, averaged.softmax(-1).argmax(-1))
    show_outcome(show, lambda: all_crops.view(-1, 3, h, w - 1))
    show_outcome(show, lambda: torch.stack(five_crop(batch[0], (12, 6))))
    show_outcome(show, lambda: torch.stack([crops[0], crops[1][..., :5]]))
    show_outcome(show, lambda: torch.stack([crops[0], crops[1].double()]).dtype)
    show_outcome(show, lambda: torch.stack([]))
    show_outcome(show, lambda: torch.cat([crops[0], crops[1]], dim=3).shape)
    unfolded = batch.unfold(2, 5, 4).unfold(3, 6, 4)
    show(unfolded.shape, unfolded.stride(), unfolded[0, 0, 1, 0])


def _pixel_shuffle_channels_last(lib, show):
    """pixel_shuffle/pixel_unshuffle round trips and their refusals, and a channels_last batch pushed through a
    whole pipeline (normalise, pad, blur, resize, sample, pool), with the strides printed along the way."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(4209)
    x = torch.arange(2 * 8 * 2 * 3, dtype=torch.float32).reshape(2, 8, 2, 3)
    up = F.pixel_shuffle(x, 2)
    show(up.shape, up.stride(), up[0, 1])
    down = F.pixel_unshuffle(up, 2)
    show(torch.equal(down, x), down.stride(), F.pixel_unshuffle(torch.arange(16.0).view(1, 1, 4, 4), 2)[0, :, 0])
    show_outcome(show, lambda: F.pixel_shuffle(x, 3))
    show_outcome(show, lambda: F.pixel_unshuffle(up, 3))
    show_outcome(show, lambda: F.pixel_shuffle(x[0, 0], 2))
    show_outcome(show, lambda: torch.nn.PixelShuffle(2)(x.to(memory_format=torch.channels_last)).stride())
    show_outcome(show, lambda: torch.nn.PixelUnshuffle(2)(up.to(memory_format=torch.channels_last)).stride())
    img = torch.rand(2, 3, 6, 6).to(memory_format=torch.channels_last)
    show(img.stride(), img.is_contiguous(), img.is_contiguous(memory_format=torch.channels_last))
    mean = torch.tensor([0.5, 0.4, 0.3]).view(1, 3, 1, 1)
    normed = (img - mean) / 0.25
    show("normed", normed.stride())
    padded = F.pad(normed, (1, 1, 1, 1), mode="reflect")
    show("reflect", padded.stride(), F.pad(normed, (1, 1, 1, 1)).stride(), F.pad(normed, (1, 1, 1, 1), mode="replicate").stride())
    blurred = F.conv2d(padded, torch.full((3, 1, 3, 3), 1 / 9), groups=3)
    show("blur", blurred.stride(), blurred[0, 0])
    resized = F.interpolate(blurred, size=(4, 5), mode="bilinear", align_corners=False)
    show("bilinear", resized.stride(), F.interpolate(blurred, scale_factor=2, mode="nearest").stride())
    show("bicubic", F.interpolate(blurred, size=(4, 5), mode="bicubic").stride())
    grid = F.affine_grid(torch.eye(2, 3).expand(2, 2, 3), [2, 3, 4, 4], align_corners=False)
    sampled = F.grid_sample(resized, grid, align_corners=False)
    show("grid_sample", sampled.stride(), sampled.is_contiguous())
    pooled = F.avg_pool2d(img, 2)
    show("avg_pool", pooled.stride(), F.max_pool2d(img, 2).stride(), F.adaptive_avg_pool2d(img, 1).stride())
    flipped = img.flip(-1)
    show("flip", flipped.stride(), img.rot90(1, (2, 3)).stride(), torch.roll(img, 1, -1).stride())
    clamped = img.mul(255).round().clamp(0, 255).to(torch.uint8)
    show("uint8", clamped.stride(), clamped.dtype, clamped.float().div(255).stride())
    stacked = torch.stack([img[0], img[1]])
    show("stack", stacked.stride(), torch.cat([img, img]).stride(), img.contiguous().stride())
    leaf = img.detach().clone().requires_grad_()
    out = F.conv2d(F.pad(leaf, (1, 1, 1, 1), mode="reflect"), torch.full((3, 1, 3, 3), 1 / 9), groups=3)
    out.pow(2).sum().backward()
    show(leaf.grad.stride(), leaf.grad[1, 2])


def _learnable_affine_theta(lib, show):
    """Gradients of a differentiable augmentation with respect to its parameters: a learnable affine theta (a
    spatial transformer fitted to a shifted target), a brightness/contrast pair, and the gradient of the sampled
    image with respect to the input, in every padding mode."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(4210)
    img = torch.rand(1, 1, 6, 6, dtype=torch.float64)
    target = torch.roll(img, shifts=1, dims=-1)
    theta = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([theta], lr=0.5)
    for step in range(4):
        opt.zero_grad()
        grid = F.affine_grid(theta, list(img.shape), align_corners=False)
        warped = F.grid_sample(img, grid, padding_mode="border", align_corners=False)
        loss = F.mse_loss(warped, target)
        loss.backward()
        show(step, loss.item(), theta.grad)
        opt.step()
    show(theta.detach(), grid.grad_fn.name(), warped.grad_fn.name())
    for padding in ("zeros", "border", "reflection"):
        for align in (False, True):
            x = img.clone().requires_grad_()
            th = torch.tensor([[[0.8, 0.3, 0.1], [-0.2, 1.1, -0.1]]], dtype=torch.float64, requires_grad=True)
            grid = F.affine_grid(th, [1, 1, 5, 5], align_corners=align)
            out = F.grid_sample(x, grid, padding_mode=padding, align_corners=align)
            dx, dth = torch.autograd.grad(out.sin().sum(), (x, th))
            show(padding, align, dx[0, 0], dth)
    factors = torch.tensor([1.2, 0.8], dtype=torch.float64, requires_grad=True)
    rgb = torch.rand(3, 4, 4, dtype=torch.float64)
    bright = (rgb * factors[0]).clamp(0, 1)
    gray_mean = (bright * torch.tensor([0.299, 0.587, 0.114], dtype=torch.float64).view(3, 1, 1)).sum(0).mean()
    contrast = (factors[1] * bright + (1 - factors[1]) * gray_mean).clamp(0, 1)
    contrast.mean().backward()
    show(contrast.grad_fn.name(), factors.grad)
    scale = torch.tensor(1.5, requires_grad=True)
    resized = F.interpolate(torch.rand(1, 1, 4, 4) * scale, size=(6, 6), mode="bilinear", antialias=True)
    resized.sum().backward()
    show(resized.grad_fn.name(), scale.grad)
    show_outcome(show, lambda: F.affine_grid(theta, [1, 1, 4, 4], align_corners=False).sum().backward())


PROGRAMS = [
    _uint8_round_trip,
    _random_crop_and_flip,
    _random_resized_crop,
    _rotation_and_shear,
    _pad_modes,
    _color_jitter_and_normalise,
    _gaussian_blur,
    _cutout_mixup_cutmix,
    _randaugment,
    _ten_crop_five_crop,
    _pixel_shuffle_channels_last,
    _learnable_affine_theta,
]

# Programs whose convolutions, matrix products or resampling sums are not bit for bit (to a tolerance).
APPROXIMATE = {_random_resized_crop, _rotation_and_shear, _gaussian_blur, _ten_crop_five_crop,
               _pixel_shuffle_channels_last, _learnable_affine_theta, _cutout_mixup_cutmix}


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    tolerance = {"rtol": 1e-5, "atol": 1e-6} if program in APPROXIMATE else {"rtol": 0, "atol": 0}
    assert_same_transcript(program, **tolerance)

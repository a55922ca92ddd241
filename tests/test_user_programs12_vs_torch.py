"""A twelfth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: computer-vision and generative-model notebooks written
without torchvision. ResNet basic and bottleneck blocks with a downsample path, zero-initialised last gamma, run
in channels_last (strides of outputs and gradients); batched NMS by coordinate offsets and ROI crops through
affine_grid/grid_sample with every padding mode and both corner conventions; sigmoid and softmax focal losses
with mixup and cutmix from a seeded Beta; neural style transfer with Gram matrices and the image optimised by
Adam with ``clamp_`` under no_grad; StyleGAN's modulated, demodulated convolution by the grouped-conv reshape; a
PatchGAN discriminator with spectral norm, affine InstanceNorm2d and hinge losses; ESPCN super-resolution with
pixel_shuffle/pixel_unshuffle against a bicubic baseline and PSNR; optical-flow warping with a smoothness loss;
a WaveNet-style gated causal Conv1d stack over mu-law codes; Grad-CAM from forward and full backward hooks;
DeepDream gradient ascent with roll jitter; and ConvTranspose2d against Upsample+Conv upsampling. Everything is
drawn from the seeded global generator, which is torch's; values are compared to a tolerance (matrix products
and convolutions are not bit for bit), and the flow is fitted in float64 (Adam turns the rounding noise of an L1
loss's gradient into whole steps).

Differences these programs found, now fixed (``tests/ops/test_program12_findings_vs_torch.py``):
- ``F.grid_sample``'s 2-d bilinear mode was a few ulp off torch, forward and backward (the optical-flow fit
  drifted apart within three Adam steps): torch's vectorised kernel fuses its sums of products into
  multiply-adds and adds the input gradient in float, vector of grid points by vector, corner by corner.

Left: 2-d nearest and bicubic sampling and the 3-d sampler still follow their own rounding (within a few ulp);
the optical-flow fit in float32 still drifts from torch's after a few Adam steps (not traced further: the
edge-aware weights' ``exp`` and the L1 kinks are candidates).
"""

from __future__ import annotations

import math

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _resnet_blocks_channels_last(lib, show):
    """ResNet basic and bottleneck blocks with a strided 1x1 downsample, the last BN's gamma zero-initialised
    (so each block starts as its shortcut), a training step, and the model run in channels_last."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(120)

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, cin, cout, stride=1):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return F.relu(out + identity)

    class Bottleneck(nn.Module):
        def __init__(self, cin, width, stride=1):
            super().__init__()
            cout = width * 4
            self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(width)
            self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            identity = self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            out += identity
            return self.relu(out)

    model = nn.Sequential(BasicBlock(3, 4), BasicBlock(4, 8, stride=2), Bottleneck(8, 2, stride=2),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 3))
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        if isinstance(m, BasicBlock):
            nn.init.zeros_(m.bn2.weight)
        if isinstance(m, Bottleneck):
            nn.init.constant_(m.bn3.weight, 0.0)
    show(sum(p.numel() for p in model.parameters()), model[2].bn3.weight)
    x = torch.randn(4, 3, 8, 8)
    y = torch.tensor([0, 1, 2, 1])
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    for step in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        show(step, round(loss.item(), 5), model[1].bn2.weight.grad.clone())
    show(model[1].downsample[1].running_mean, model[1].downsample[1].num_batches_tracked)

    model = model.to(memory_format=torch.channels_last)
    w = model[0].conv1.weight
    show(w.is_contiguous(), w.is_contiguous(memory_format=torch.channels_last), w.stride())
    xl = x.to(memory_format=torch.channels_last).requires_grad_()
    show(xl.stride(), xl.is_contiguous(memory_format=torch.channels_last))
    feats = model[:3](xl)
    show(feats.shape, feats.is_contiguous(memory_format=torch.channels_last))
    model.eval()
    out = model(xl)
    out.sum().backward()
    show(out, xl.grad.stride(), xl.grad.is_contiguous(memory_format=torch.channels_last))
    show(w.grad.stride(), w.grad.is_contiguous(memory_format=torch.channels_last))
    show_outcome(show, lambda: torch.randn(2, 3, 4).to(memory_format=torch.channels_last))
    show(torch.randn(2, 3, 1, 1).contiguous(memory_format=torch.channels_last).stride())


def _batched_nms_and_roi_crops(lib, show):
    """Detection post-processing by hand: IoU, a greedy NMS loop with masks, batched NMS by shifting each class's
    boxes apart, then ROI crops of a feature map through affine_grid/grid_sample (every padding mode, both
    corner conventions) with gradients back into the features."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(121)

    def box_area(b):
        return (b[:, 2] - b[:, 0]).clamp(min=0) * (b[:, 3] - b[:, 1]).clamp(min=0)

    def box_iou(a, b):
        lt = torch.max(a[:, None, :2], b[None, :, :2])
        rb = torch.min(a[:, None, 2:], b[None, :, 2:])
        inter = (rb - lt).clamp(min=0).prod(dim=2)
        return inter / (box_area(a)[:, None] + box_area(b)[None, :] - inter)

    def nms(boxes, scores, thresh):
        order = scores.argsort(descending=True)
        keep = []
        suppressed = torch.zeros(len(boxes), dtype=torch.bool)
        ious = box_iou(boxes, boxes)
        for i in order.tolist():
            if suppressed[i]:
                continue
            keep.append(i)
            suppressed |= ious[i] > thresh
        return torch.tensor(keep, dtype=torch.int64)

    centers = torch.rand(12, 2) * 20
    sizes = torch.rand(12, 2) * 8 + 2
    boxes = torch.cat([centers - sizes / 2, centers + sizes / 2], dim=1)
    scores = torch.rand(12)
    labels = torch.randint(0, 3, (12,))
    show(box_iou(boxes[:4], boxes[:4]))
    keep = nms(boxes, scores, 0.3)
    show(keep, scores[keep])
    offsets = labels.to(boxes) * (boxes.max() + 1)
    keep_b = nms(boxes + offsets[:, None], scores, 0.3)
    show(keep_b, labels[keep_b], torch.unique(labels[keep_b], return_counts=True))
    per_class = [torch.nonzero(labels == c).flatten()[nms(boxes[labels == c], scores[labels == c], 0.3)]
                 for c in range(3)]
    merged = torch.cat(per_class)
    show(torch.equal(merged[scores[merged].argsort(descending=True)], keep_b))
    show(nms(torch.empty(0, 4), torch.empty(0), 0.5))

    feats = torch.randn(1, 2, 6, 6, requires_grad=True)
    rois = torch.tensor([[0.5, 0.5, 3.5, 4.0], [-1.0, 2.0, 7.0, 5.5]])
    h = w = 6
    cx = (rois[:, 0] + rois[:, 2]) / 2 / (w - 1) * 2 - 1
    cy = (rois[:, 1] + rois[:, 3]) / 2 / (h - 1) * 2 - 1
    sx = (rois[:, 2] - rois[:, 0]) / (w - 1)
    sy = (rois[:, 3] - rois[:, 1]) / (h - 1)
    theta = torch.zeros(2, 2, 3)
    theta[:, 0, 0], theta[:, 0, 2], theta[:, 1, 1], theta[:, 1, 2] = sx, cx, sy, cy
    show(theta)
    total = 0
    for align in (True, False):
        grid = F.affine_grid(theta, [2, 2, 3, 3], align_corners=align)
        show(align, grid[1, 0])
        for pad in ("zeros", "border", "reflection"):
            crops = F.grid_sample(feats.expand(2, -1, -1, -1), grid, mode="bilinear", padding_mode=pad,
                                  align_corners=align)
            show(pad, crops[1, 0], crops.grad_fn.name())
            total = total + crops.square().mean()
    total.backward()
    show(feats.grad)
    pooled = F.adaptive_max_pool2d(feats[:, :, 1:4, 0:4], (2, 2), return_indices=True)
    show(pooled[0], pooled[1])


def _focal_losses_mixup_cutmix(lib, show):
    """Sigmoid focal loss (RetinaNet) with every reduction and its gradient, a softmax focal loss, then mixup and
    cutmix with a Beta sample, soft one-hot targets and cross_entropy on probabilities."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(122)

    def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2.0, reduction="none"):
        p = torch.sigmoid(inputs)
        ce = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
        p_t = p * targets + (1 - p) * (1 - targets)
        loss = ce * ((1 - p_t) ** gamma)
        if alpha >= 0:
            loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss
        if reduction == "mean":
            return loss.mean()
        if reduction == "sum":
            return loss.sum()
        if reduction != "none":
            raise ValueError(f"Invalid Value for arg 'reduction': '{reduction}'")
        return loss

    logits = torch.randn(4, 3, requires_grad=True)
    targets = (torch.rand(4, 3) > 0.6).float()
    for red in ("none", "mean", "sum"):
        out = sigmoid_focal_loss(logits, targets, reduction=red)
        show(red, out, out.grad_fn.name())
    sigmoid_focal_loss(logits, targets, reduction="sum").backward()
    show(logits.grad)
    show_outcome(show, lambda: sigmoid_focal_loss(logits, targets, reduction="batchmean"))

    def softmax_focal(logits, y, gamma=2.0, weight=None):
        logp = F.log_softmax(logits, dim=-1)
        ce = F.nll_loss(logp, y, weight=weight, reduction="none")
        pt = logp.gather(1, y[:, None]).squeeze(1).exp()
        return ((1 - pt) ** gamma * ce).mean()

    y = torch.tensor([0, 2, 1, 2])
    show(softmax_focal(logits, y), softmax_focal(logits, y, gamma=0.0), F.cross_entropy(logits, y))
    show(softmax_focal(logits, y, weight=torch.tensor([1.0, 2.0, 0.5])))

    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(4, 5))
    images = torch.rand(6, 1, 8, 8)
    labels = torch.randint(0, 5, (6,))
    beta = torch.distributions.Beta(torch.tensor([0.4]), torch.tensor([0.4]))
    lam = beta.sample().item()
    show(round(lam, 6), beta.mean, beta.log_prob(torch.tensor([0.3])))
    perm = torch.randperm(6)
    mixed = lam * images + (1 - lam) * images[perm]
    soft = lam * F.one_hot(labels, 5).float() + (1 - lam) * F.one_hot(labels[perm], 5).float()
    out = model(mixed)
    loss_soft = F.cross_entropy(out, soft)
    loss_pair = lam * F.cross_entropy(out, labels) + (1 - lam) * F.cross_entropy(out, labels[perm])
    show(perm, soft[0], loss_soft, loss_pair, torch.allclose(loss_soft, loss_pair))
    show(F.cross_entropy(out, soft, label_smoothing=0.1), F.cross_entropy(out, soft, reduction="none"))
    show_outcome(show, lambda: F.cross_entropy(out, soft.double()))
    show_outcome(show, lambda: F.cross_entropy(out, soft[:, :4]))

    lam = torch.distributions.Beta(1.0, 1.0).sample().item()
    cut = math.sqrt(1 - lam)
    ch, cw = int(8 * cut), int(8 * cut)
    cy, cx = torch.randint(8, (1,)).item(), torch.randint(8, (1,)).item()
    y1, y2 = max(cy - ch // 2, 0), min(cy + ch // 2, 8)
    x1, x2 = max(cx - cw // 2, 0), min(cx + cw // 2, 8)
    cutmixed = images.clone()
    cutmixed[:, :, y1:y2, x1:x2] = images[perm, :, y1:y2, x1:x2]
    lam_adj = 1 - (y2 - y1) * (x2 - x1) / 64
    show(round(lam, 6), (y1, y2, x1, x2), lam_adj, (cutmixed != images).float().mean())
    loss = F.cross_entropy(model(cutmixed), lam_adj * F.one_hot(labels, 5) + (1 - lam_adj) *
                           F.one_hot(labels[perm], 5))
    loss.backward()
    show(loss, model[0].weight.grad.abs().sum(), model[4].bias.grad)


def _neural_style_transfer(lib, show):
    """Gatys style transfer with a small random conv feature extractor: content and Gram-matrix style losses at
    several layers captured by forward hooks, the image as the optimised parameter, clamp_ under no_grad."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(123)
    features = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.Conv2d(6, 6, 3, padding=1), nn.ReLU(),
                             nn.AvgPool2d(2), nn.Conv2d(6, 8, 3, padding=1), nn.ReLU())
    features.requires_grad_(False).eval()
    captured: dict = {}
    for idx in (1, 3, 6):
        features[idx].register_forward_hook(lambda m, i, o, idx=idx: captured.__setitem__(idx, o))

    def gram(x):
        b, c, h, w = x.shape
        f = x.view(b, c, h * w)
        return torch.bmm(f, f.transpose(1, 2)) / (c * h * w)

    content_img = torch.rand(1, 3, 8, 8)
    style_img = torch.rand(1, 3, 8, 8)
    features(content_img)
    content_target = captured[3].detach()
    features(style_img)
    style_targets = {k: gram(v).detach() for k, v in captured.items()}
    show(content_target.shape, [tuple(g.shape) for g in style_targets.values()], style_targets[6][0, :2, :3])

    image = content_img.clone().requires_grad_(True)
    opt = torch.optim.Adam([image], lr=0.05)
    for step in range(4):
        opt.zero_grad()
        features(image)
        c_loss = F.mse_loss(captured[3], content_target)
        s_loss = sum(F.mse_loss(gram(captured[k]), style_targets[k]) for k in (1, 3, 6))
        loss = c_loss + 1e3 * s_loss
        loss.backward()
        opt.step()
        with torch.no_grad():
            image.clamp_(0, 1)
        show(step, round(c_loss.item(), 6), round(s_loss.item(), 8), image.grad.norm(), image.is_leaf)
    show(image[0, 0, :2], image.min(), image.max(), image.requires_grad, image._version)
    tv = (image[..., 1:, :] - image[..., :-1, :]).abs().mean() + (image[..., 1:] - image[..., :-1]).abs().mean()
    show(tv, tv.grad_fn.name())
    show_outcome(show, lambda: image.clamp_(0, 1))


def _stylegan_modulated_conv(lib, show):
    """StyleGAN2's modulated, demodulated convolution: a mapping MLP gives styles, weights are scaled per sample
    and normalised, and the batch runs as one grouped conv; checked against a per-sample loop, with noise
    injection, a learned constant input and the gradient of a non-saturating generator loss."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(124)

    class ModulatedConv(nn.Module):
        def __init__(self, cin, cout, k, w_dim, demodulate=True):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(1, cout, cin, k, k))
            self.affine = nn.Linear(w_dim, cin)
            nn.init.ones_(self.affine.bias)
            self.scale = 1 / math.sqrt(cin * k * k)
            self.demodulate, self.pad = demodulate, k // 2

        def forward(self, x, w):
            b, cin, h, wd = x.shape
            style = self.affine(w).view(b, 1, cin, 1, 1)
            weight = self.scale * self.weight * style
            if self.demodulate:
                demod = torch.rsqrt(weight.pow(2).sum([2, 3, 4]) + 1e-8)
                weight = weight * demod.view(b, -1, 1, 1, 1)
            weight = weight.view(b * weight.shape[1], cin, *weight.shape[3:])
            out = F.conv2d(x.reshape(1, b * cin, h, wd), weight, padding=self.pad, groups=b)
            return out.view(b, -1, h, wd), weight

    mapping = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 8), nn.LeakyReLU(0.2))
    const = nn.Parameter(torch.randn(1, 3, 4, 4))
    conv = ModulatedConv(3, 5, 3, 8)
    noise_strength = nn.Parameter(torch.zeros([]))
    z = torch.randn(2, 4)
    w = mapping(F.normalize(z, dim=1))
    x = const.expand(2, -1, -1, -1)
    out, weight = conv(x, w)
    show(out.shape, weight.shape, out.grad_fn.name(), weight.grad_fn.name())
    show(weight.view(2, 5, -1).pow(2).sum(-1))
    loop = torch.stack([F.conv2d(x[i:i + 1], weight.view(2, 5, 3, 3, 3)[i], padding=1)[0] for i in range(2)])
    show(torch.allclose(out, loop, atol=1e-5), (out - loop).abs().max() < 1e-5)
    noisy = F.leaky_relu(out + noise_strength * torch.randn(2, 1, 4, 4), 0.2) * math.sqrt(2)
    to_rgb, _ = ModulatedConv(5, 3, 1, 8, demodulate=False)(noisy, w)
    show(to_rgb[0, :, 0], to_rgb.grad_fn.name())
    fake_logits = to_rgb.mean(dim=(1, 2, 3))
    g_loss = F.softplus(-fake_logits).mean()
    g_loss.backward()
    show(g_loss, const.grad.shape, conv.weight.grad.norm(), noise_strength.grad, mapping[0].weight.grad.abs().max())
    upsampled = F.interpolate(to_rgb, scale_factor=2, mode="bilinear", align_corners=False)
    show(upsampled.shape, upsampled[0, 0, :2, :4])
    show_outcome(show, lambda: F.conv2d(x.reshape(1, 6, 4, 4), weight, padding=1, groups=4))


def _patchgan_discriminator(lib, show):
    """A pix2pix PatchGAN discriminator with spectral-normalised convs, affine InstanceNorm2d and LeakyReLU,
    trained with hinge losses against a tiny generator; the spectral-norm buffers and the eval-mode weight."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(125)
    SN = nn.utils.spectral_norm

    disc = nn.Sequential(
        SN(nn.Conv2d(6, 8, 4, 2, 1)), nn.LeakyReLU(0.2, inplace=True),
        SN(nn.Conv2d(8, 16, 4, 2, 1, bias=False)), nn.InstanceNorm2d(16, affine=True), nn.LeakyReLU(0.2, True),
        SN(nn.Conv2d(16, 1, 3, 1, 1)))
    gen = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.InstanceNorm2d(8), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1),
                        nn.Tanh())
    show(disc[0])
    show(sorted(n for n, _ in disc[0].named_parameters()), sorted(n for n, _ in disc[0].named_buffers()))
    show(disc[3], disc[3].weight, disc[3].running_mean)
    d_opt = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.0, 0.9))
    g_opt = torch.optim.Adam(gen.parameters(), lr=1e-4, betas=(0.5, 0.999))
    src, real = torch.rand(2, 3, 16, 16) * 2 - 1, torch.rand(2, 3, 16, 16) * 2 - 1
    for step in range(2):
        fake = gen(src)
        d_real = disc(torch.cat([src, real], 1))
        d_fake = disc(torch.cat([src, fake.detach()], 1))
        d_loss = F.relu(1 - d_real).mean() + F.relu(1 + d_fake).mean()
        d_opt.zero_grad()
        d_loss.backward()
        d_opt.step()
        g_loss = -disc(torch.cat([src, fake], 1)).mean() + 10 * F.l1_loss(fake, real)
        g_opt.zero_grad()
        g_loss.backward()
        g_opt.step()
        show(step, d_real.shape, round(d_loss.item(), 5), round(g_loss.item(), 5), disc[0].weight_u[:3])
    show(disc[0].weight_orig.grad.norm(), disc[2].weight_v[:4], disc[3].weight.grad)
    disc.eval()
    w_eval = disc[0].weight.clone()
    with torch.no_grad():
        disc(torch.cat([src, real], 1))
    sigma = torch.linalg.matrix_norm(disc[0].weight_orig.flatten(1), ord=2)
    show(torch.allclose(disc[0].weight, w_eval), torch.linalg.matrix_norm(disc[0].weight.flatten(1), ord=2), sigma)
    nn.utils.remove_spectral_norm(disc[0])
    show(sorted(n for n, _ in disc[0].named_parameters()), disc[0].weight.requires_grad)
    show_outcome(show, lambda: nn.utils.remove_spectral_norm(disc[0]))
    show_outcome(show, lambda: SN(disc[2]))


def _espcn_super_resolution(lib, show):
    """ESPCN: features at low resolution and a sub-pixel convolution (pixel_shuffle), trained against the
    high-resolution image and compared with a bicubic baseline by PSNR; pixel_unshuffle as its inverse."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(126)
    r = 2

    class ESPCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(1, 8, 5, padding=2), nn.Tanh(), nn.Conv2d(8, 4, 3, padding=1),
                                      nn.Tanh(), nn.Conv2d(4, r * r, 3, padding=1))
            self.shuffle = nn.PixelShuffle(r)

        def forward(self, x):
            return self.shuffle(self.body(x))

    def psnr(a, b):
        return 10 * torch.log10(1.0 / F.mse_loss(a, b))

    ys, xs = torch.meshgrid(torch.linspace(0, 1, 12), torch.linspace(0, 1, 12), indexing="ij")
    hr = (0.5 + 0.4 * torch.sin(6 * xs) * torch.cos(4 * ys))[None, None].repeat(2, 1, 1, 1)
    hr = (hr + 0.02 * torch.randn_like(hr)).clamp(0, 1)
    lr_img = F.interpolate(hr, scale_factor=0.5, mode="area")
    show(hr.shape, lr_img.shape, lr_img[0, 0, 0])
    bicubic = F.interpolate(lr_img, scale_factor=r, mode="bicubic", align_corners=False)
    show(bicubic[0, 0, 0], bicubic.min() < 0 or bicubic.max() > 1, psnr(bicubic.clamp(0, 1), hr))
    show(F.interpolate(lr_img, size=(12, 12), mode="bilinear", antialias=True)[0, 0, 1])
    model = ESPCN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(5):
        sr = model(lr_img)
        loss = F.mse_loss(sr, hr)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, round(loss.item(), 6), round(psnr(sr.detach(), hr).item(), 4))
    show(sr.shape, sr.grad_fn.name(), model.body[4].weight.grad.shape)
    un = F.pixel_unshuffle(hr, r)
    show(un.shape, torch.equal(F.pixel_shuffle(un, r), hr), un[0, :, 0, 0], hr[0, 0, :2, :2])
    show(nn.PixelUnshuffle(3)(torch.arange(36.0).view(1, 1, 6, 6))[0, :, 0, 0], nn.PixelShuffle(2))
    show_outcome(show, lambda: F.pixel_shuffle(torch.randn(1, 3, 2, 2), 2))
    show_outcome(show, lambda: F.pixel_unshuffle(torch.randn(1, 1, 5, 4), 2))
    show_outcome(show, lambda: F.interpolate(lr_img, scale_factor=2, mode="bicubic", align_corners=True)[0, 0, 0])


def _optical_flow_warping(lib, show):
    """Backward warping of a frame by a flow field with grid_sample (pixel flow normalised to [-1, 1]), a
    photometric loss with an occlusion mask, a first-order edge-aware smoothness loss from image gradients,
    and the flow fitted by Adam (in float64: Adam turns the rounding noise of an L1 loss's gradient into steps)."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(127)
    b, h, w = 1, 8, 10
    frame1 = F.avg_pool2d(torch.rand(b, 3, h + 2, w + 2, dtype=torch.float64), 3, stride=1)
    true_shift = 1.0
    xs = torch.arange(w).float()
    frame2 = frame1.roll(1, dims=3)

    def warp(img, flow):
        gy, gx = torch.meshgrid(torch.arange(h, dtype=img.dtype), torch.arange(w, dtype=img.dtype), indexing="ij")
        base = torch.stack([gx, gy], dim=0)[None]
        coords = base + flow
        norm = torch.stack([2 * coords[:, 0] / (w - 1) - 1, 2 * coords[:, 1] / (h - 1) - 1], dim=-1)
        warped = F.grid_sample(img, norm, mode="bilinear", padding_mode="zeros", align_corners=True)
        valid = F.grid_sample(torch.ones_like(img[:, :1]), norm, align_corners=True) > 0.999
        return warped, valid

    def smoothness(flow, img):
        dx_f = (flow[..., :, 1:] - flow[..., :, :-1]).abs()
        dy_f = (flow[..., 1:, :] - flow[..., :-1, :]).abs()
        wx = torch.exp(-(img[..., :, 1:] - img[..., :, :-1]).abs().mean(1, keepdim=True))
        wy = torch.exp(-(img[..., 1:, :] - img[..., :-1, :]).abs().mean(1, keepdim=True))
        return (dx_f * wx).mean() + (dy_f * wy).mean()

    zero_flow = torch.zeros(b, 2, h, w, dtype=torch.float64)
    same, valid = warp(frame1, zero_flow)
    show(torch.allclose(same, frame1, atol=1e-6), valid.all(), xs[:3])
    shift = torch.zeros(b, 2, h, w, dtype=torch.float64)
    shift[:, 0] = -true_shift
    warped, valid = warp(frame2, shift)
    show(valid[0, 0, 0], (warped - frame1)[..., 1:].abs().max() < 1e-5, warped[0, 0, 0, :4])
    flow = torch.zeros(b, 2, h, w, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([flow], lr=0.1)
    for step in range(6):
        warped, valid = warp(frame2, flow)
        photo = ((warped - frame1).abs() * valid).sum() / valid.sum().clamp(min=1)
        smooth = smoothness(flow, frame1)
        loss = photo + 0.1 * smooth
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, round(photo.item(), 6), round(smooth.item(), 6), flow[0, :, 3, 4].clone())
    show(flow.grad[0, 0, :2, :5], valid.dtype, valid.sum())
    epe = (flow.detach() - shift).norm(dim=1).mean()
    show(epe)
    show_outcome(show, lambda: F.grid_sample(frame1, torch.zeros(1, 4, 4, 3)))


def _wavenet_mu_law(lib, show):
    """A WaveNet-style stack of dilated causal Conv1d layers (left padding) with gated tanh*sigmoid units,
    residual and skip connections, over mu-law encoded audio, trained with a 256-way cross entropy; causality
    is checked by the gradient of an early output with respect to later inputs."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(128)
    mu = 255

    def mu_law_encode(x):
        mag = torch.log1p(mu * x.abs()) / math.log1p(mu)
        return ((torch.sign(x) * mag + 1) / 2 * mu + 0.5).long()

    def mu_law_decode(q):
        y = 2 * q.float() / mu - 1
        return torch.sign(y) * ((1 + mu) ** y.abs() - 1) / mu

    t = torch.linspace(0, 1, 48)
    audio = 0.6 * torch.sin(2 * math.pi * 5 * t) + 0.05 * torch.randn(48)
    q = mu_law_encode(audio.clamp(-1, 1))
    show(q[:10], q.dtype, q.min(), q.max(), (mu_law_decode(q) - audio).abs().max() < 0.02)

    class GatedLayer(nn.Module):
        def __init__(self, ch, dilation):
            super().__init__()
            self.pad = dilation
            self.conv = nn.Conv1d(ch, 2 * ch, 2, dilation=dilation)
            self.res = nn.Conv1d(ch, ch, 1)
            self.skip = nn.Conv1d(ch, ch, 1)

        def forward(self, x):
            h = self.conv(F.pad(x, (self.pad, 0)))
            a, g = h.chunk(2, dim=1)
            z = torch.tanh(a) * torch.sigmoid(g)
            return x + self.res(z), self.skip(z)

    class WaveNet(nn.Module):
        def __init__(self, ch=8):
            super().__init__()
            self.embed = nn.Embedding(256, ch)
            self.layers = nn.ModuleList(GatedLayer(ch, d) for d in (1, 2, 4, 8))
            self.out = nn.Sequential(nn.ReLU(), nn.Conv1d(ch, ch, 1), nn.ReLU(), nn.Conv1d(ch, 256, 1))

        def forward(self, codes):
            x = self.embed(codes).transpose(1, 2)
            skips = 0
            for layer in self.layers:
                x, s = layer(x)
                skips = skips + s
            return self.out(skips)

    net = WaveNet()
    inp, target = q[None, :-1], q[None, 1:]
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    for step in range(3):
        logits = net(inp)
        loss = F.cross_entropy(logits, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, logits.shape, round(loss.item(), 5), round(math.log(256), 5))
    show(net.layers[3].conv.weight.grad.norm(), net.embed.weight.grad.abs().sum(0)[:4])
    x = torch.randn(1, 8, 20, requires_grad=True)
    h = x
    for layer in net.layers:
        h, _ = layer(h)
    h[0, :, 5].sum().backward()
    show(x.grad[0].abs().sum(0) != 0, net.layers[0].conv)
    with torch.no_grad():
        probs = F.softmax(net(inp)[0, :, -1], dim=0)
        sample = torch.multinomial(probs, 1)
    show(probs.sum(), sample, mu_law_decode(sample))
    show_outcome(show, lambda: F.cross_entropy(logits, target.float()))
    show_outcome(show, lambda: net.embed(torch.tensor([[256]])))


def _grad_cam(lib, show):
    """Grad-CAM: a forward hook keeps the last conv activations and a full backward hook their gradient; the
    class score's gradient is pooled into channel weights, the map is ReLU'd, normalised and upsampled; the
    hooks' arguments and the refusal of a full backward hook on an in-place output."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(129)
    model = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 8, 3, padding=1),
                          nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))
    model.eval()
    store: dict = {}
    calls: list = []

    def fwd_hook(module, inputs, output):
        store["act"] = output.detach()
        calls.append(("fwd", type(inputs).__name__, len(inputs), tuple(output.shape)))

    def bwd_hook(module, grad_input, grad_output):
        store["grad"] = grad_output[0].detach()
        calls.append(("bwd", len(grad_input), grad_input[0] is None, tuple(grad_output[0].shape)))

    target_layer = model[3]
    h1 = target_layer.register_forward_hook(fwd_hook)
    h2 = target_layer.register_full_backward_hook(bwd_hook)
    image = torch.rand(1, 3, 8, 8)
    logits = model(image)
    cls = logits.argmax(dim=1).item()
    show(logits, cls)
    model.zero_grad()
    logits[0, cls].backward()
    show(calls)
    weights = store["grad"].mean(dim=(2, 3), keepdim=True)
    cam = F.relu((weights * store["act"]).sum(dim=1, keepdim=True))
    show(weights.flatten(), cam[0, 0])
    cam = F.interpolate(cam, size=(8, 8), mode="bilinear", align_corners=False)
    cam = (cam - cam.min()) / (cam.max() - cam.min() + 1e-8)
    show(cam.shape, cam[0, 0, ::3, ::3], cam.max())
    h1.remove()
    h2.remove()
    calls.clear()
    image_g = image.clone().requires_grad_()
    model(image_g)[0, cls].backward()
    saliency = image_g.grad.abs().amax(dim=1)
    show(calls, saliency[0, :2], saliency.argmax())
    relu = model[1]
    relu_inplace = nn.ReLU(inplace=True)
    relu_inplace.register_full_backward_hook(lambda m, gi, go: None)
    show_outcome(show, lambda: relu_inplace(model[0](image)).sum().backward())
    h3 = relu.register_full_backward_hook(lambda m, gi, go: (gi[0].clamp(min=0),))
    guided_in = image.clone().requires_grad_()
    model(guided_in)[0, cls].backward()
    show(guided_in.grad[0, 0, :2, :4])
    h3.remove()
    show(len(relu._backward_hooks), relu._is_full_backward_hook)


def _deep_dream(lib, show):
    """DeepDream: gradient ascent on the input for the norm of a layer's activations, with random jitter by
    roll and its undo, gradient normalisation, octaves by interpolate, and clamp_ under no_grad."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(130)
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
    net.requires_grad_(False)
    img = torch.rand(1, 3, 8, 8) * 0.2 + 0.4

    def dream_step(x, lr=0.05):
        ox, oy = torch.randint(-2, 3, (2,)).tolist()
        x = x.roll((ox, oy), dims=(-1, -2)).detach().requires_grad_(True)
        act = net(x)
        loss = act.norm()
        loss.backward()
        g = x.grad / (x.grad.abs().mean() + 1e-8)
        with torch.no_grad():
            x += lr * g
            x.clamp_(0, 1)
        return x.detach().roll((-ox, -oy), dims=(-1, -2)), loss.item(), (ox, oy)

    base = img
    octaves = [F.interpolate(base, scale_factor=1 / 1.5 ** i, mode="bilinear", align_corners=False,
                             recompute_scale_factor=True) for i in range(2)][::-1]
    show([tuple(o.shape) for o in octaves])
    detail = torch.zeros_like(octaves[0])
    for i, octave in enumerate(octaves):
        if i > 0:
            detail = F.interpolate(detail, size=octave.shape[-2:], mode="bilinear", align_corners=False)
        x = octave + detail
        for _ in range(3):
            x, loss, shift = dream_step(x)
            show(i, round(loss, 5), shift)
        detail = x - octave
    show(x.shape, x[0, 0, :2, :4], x.requires_grad, x.grad)
    show(torch.roll(torch.arange(6).view(2, 3), 1), torch.roll(torch.arange(6).view(2, 3), (1, -1), (0, 1)))
    show_outcome(show, lambda: torch.roll(torch.arange(6).view(2, 3), (1, 2), (0,)))
    show_outcome(show, lambda: octaves[0].requires_grad_().clamp_(0, 1))


def _upsampling_checkerboard(lib, show):
    """A U-Net decoder stage two ways: ConvTranspose2d(stride 2) and Upsample+Conv; the checkerboard pattern of
    a transposed conv of a constant input (uneven kernel overlap), output_padding and output_size, and the
    gradients of the skip concatenation."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(131)
    deconv = nn.ConvTranspose2d(4, 2, kernel_size=3, stride=2, padding=1, output_padding=1)
    resize = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(4, 2, 3, padding=1))
    show(deconv, resize[0])
    with torch.no_grad():
        deconv.weight.fill_(1.0)
        deconv.bias.zero_()
        resize[1].weight.fill_(1.0)
        resize[1].bias.zero_()
    flat = torch.ones(1, 4, 4, 4)
    a = deconv(flat)
    b = resize(flat)
    show(a.shape, a[0, 0], b[0, 0])
    show(a[0, 0].std(), b[0, 0, 1:-1, 1:-1].std())
    k4 = nn.ConvTranspose2d(1, 1, 4, stride=2, padding=1, bias=False)
    nn.init.ones_(k4.weight)
    show(k4(torch.ones(1, 1, 3, 3))[0, 0])
    torch.manual_seed(131)
    up = nn.ConvTranspose2d(4, 2, 2, stride=2)
    enc = torch.randn(2, 2, 6, 6, requires_grad=True)
    dec = torch.randn(2, 4, 3, 3, requires_grad=True)
    merged = torch.cat([up(dec), enc], dim=1)
    fused = nn.Conv2d(4, 2, 3, padding=1)(merged)
    fused.pow(2).mean().backward()
    show(merged.shape, fused.grad_fn.name(), enc.grad[0, 0, 0], dec.grad[0, :, 0, 0], up.weight.grad.shape)
    odd = nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1)
    x = torch.randn(1, 2, 3, 3)
    show(odd(x).shape, odd(x, output_size=[6, 6]).shape, odd(x, output_size=(1, 2, 5, 5)).shape)
    show_outcome(show, lambda: odd(x, output_size=[8, 8]))
    show_outcome(show, lambda: nn.ConvTranspose2d(2, 2, 3, stride=2, output_padding=2))
    show_outcome(show, lambda: nn.ConvTranspose2d(2, 2, 3, stride=2, output_padding=2)(x))
    show(F.interpolate(torch.arange(4.0).view(1, 1, 2, 2), scale_factor=2, mode="nearest-exact")[0, 0])
    show(nn.Upsample(size=3, mode="bilinear", align_corners=True)(torch.arange(4.0).view(1, 1, 2, 2))[0, 0])


PROGRAMS = [
    _resnet_blocks_channels_last,
    _batched_nms_and_roi_crops,
    _focal_losses_mixup_cutmix,
    _neural_style_transfer,
    _stylegan_modulated_conv,
    _patchgan_discriminator,
    _espcn_super_resolution,
    _optical_flow_warping,
    _wavenet_mu_law,
    _grad_cam,
    _deep_dream,
    _upsampling_checkerboard,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)

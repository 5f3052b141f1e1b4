"""Greedy decode of a Llama-3-8B-shaped decoder: bf16, w4a16 and torch's int4 in one process.

Synthetic: random weights (no download), so the tokens mean nothing; the shapes, the work and the
bytes per step are Llama-3-8B's (32 layers, hidden 4096, 32 heads of 128 with 8 KV heads,
intermediate 14336, vocabulary 128256). Per layer the linears are qkv (6144 x 4096), o (4096 x
4096), gate/up (28672 x 4096) and down (4096 x 14336), the eight default layers' 8B half; the
embedding and the LM head stay bf16 in every variant. Random 4-bit weights need no quantizer: any
bytes are valid packed codes, so w4a16's packed weights are random bytes with random positive
scales, and torch's int4 weights random nibbles through ``torch._convert_weight_to_int4pack``
(group 128; what torchao's int4 weight-only path runs, ``torch._weight_int4pack_mm``).

One decode step (every layer, the final norm, the LM head and the argmax) is captured in one CUDA
graph; the per-layer function is compiled with ``torch.compile(fullgraph=True)`` (weights are
arguments, so one compiled graph serves all 32 layers; automatic dynamic shapes give batch 1 its
own graph and the larger batches one with a symbolic batch). Context 512: the static KV cache holds
512 random positions and each step attends over them plus itself. Reported: tokens/s at batch 1, 8
and 32; the step split into its linears (the same calls, the LM head's included, alone in a graph)
and the rest. At batch 1 also: for w4a16, the step of an act-order checkpoint, with a gather
(``index_select`` of the activations, as ``w4a16.nn.Linear`` does) before each of the four linears
of a layer ("all"), and with the down projection's permutation folded into gate/up's rows
(``w4a16.parallel.fold_act_order``: gathers before qkv, o and gate/up only, "folded"), the same
through ``torch.ops.w4a16.gather_k`` ("op", ``w4a16.nn.Linear``'s ``gather="op"``), with the op
before o only ("mixed"), and with the permutation handed to ``torch.ops.w4a16.gemm`` itself
("fused", ``gather="fused"``: inside the op call, the TMA GEMV's own gather at batch 1 on sm_90,
else the library's gather kernel; down folded likewise); ``--act-order`` picks which of these run.
For w4a16 and int4, the step with the LM head quantized like the layers (what torchao's
``quantize_`` does by default; GPTQ and AWQ checkpoints usually keep it in bf16). ``--pdl`` also
times the w4a16 step with the op's first kernels launched programmatically (``w4a16.ops.GEMM_FLAGS``
0, the C API's default) rather than in plain stream order (the op's ``W4A16_GEMM_NO_PDL``).
``--profile`` lists the kernels of one compiled layer per variant (eager, outside the graph) to show
what the gathers fused into.

Usage: ``python3 bench/decode_bench.py [--batches 1,8,32] [--layers 32] [--profile] [--pdl]
[--act-order all,folded,op,mixed,fused] [--json FILE]``
"""

from __future__ import annotations

import argparse
import json
from typing import Callable, Dict, List, Optional

import torch
import torch.nn.functional as F

import w4a16  # registers torch.ops.w4a16.gemm (and w4a16.ops.GEMM_FLAGS for --pdl)
from graph_timing import graph_us

HIDDEN, INTER, HEADS, KV_HEADS, HEAD_DIM, VOCAB = 4096, 14336, 32, 8, 128, 128256
GROUP, CTX = 128, 512
LINEARS = {"qkv": (HIDDEN + 2 * KV_HEADS * HEAD_DIM, HIDDEN), "o": (HIDDEN, HIDDEN),
           "gate_up": (2 * INTER, HIDDEN), "down": (HIDDEN, INTER)}
DT = torch.bfloat16


Weights = Dict[str, torch.Tensor]  # one linear's tensors: "w" (bf16), "q" + "s" or "q" + "sz"


def make_weight(kind: str, n: int, k: int, dev: torch.device) -> Weights:
    """One linear's tensors for a variant (random: see the module docstring)."""
    if kind == "bf16":
        return {"w": (torch.randn(n, k, device=dev) * 0.02).to(DT)}
    if kind == "w4a16":
        return {"q": torch.randint(0, 256, (n, k // 2), dtype=torch.uint8, device=dev),
                "s": (torch.rand(k // GROUP, n, device=dev) * 0.004 + 0.001).to(DT)}
    u8 = torch.randint(0, 256, (n, k // 2), dtype=torch.uint8, device=dev)
    sz = torch.empty(k // GROUP, n, 2, device=dev, dtype=DT)
    sz[..., 0].uniform_(0.001, 0.005)
    sz[..., 1].uniform_(-0.01, 0.01)
    return {"q": torch._convert_weight_to_int4pack(u8, 8), "sz": sz}


def linear(kind: str, x: torch.Tensor, t: Weights,
           perm: Optional[torch.Tensor] = None, gather: Optional[str] = None) -> torch.Tensor:
    if gather is not None:
        if perm is None:
            raise ValueError(f"the act-order gather {gather!r} needs a permutation")
        if gather == "is":
            x = x.index_select(-1, perm)
        elif gather == "op":
            x = torch.ops.w4a16.gather_k(x, perm)
        elif gather == "fused":  # the GEMM takes x's columns in perm's order itself
            if kind != "w4a16":
                raise ValueError(f"the fused act-order gather is w4a16's, not {kind}'s")
            return torch.ops.w4a16.gemm(x, t["q"], t["s"], None, None, GROUP, 1.0, perm)
    if kind == "bf16":
        return F.linear(x, t["w"])
    if kind == "w4a16":
        return torch.ops.w4a16.gemm(x, t["q"], t["s"], None, None, GROUP, 1.0)
    return torch._weight_int4pack_mm(x, t["q"], GROUP, t["sz"])


def rms_norm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * w


def rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = x[..., : HEAD_DIM // 2], x[..., HEAD_DIM // 2:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


# How each linear of a layer (qkv, o, gate_up, down) gathers its input in each act-order variant:
# None (no gather), "is" (index_select, which torch.compile may fuse into the kernel producing the
# input), "op" (torch.ops.w4a16.gather_k) or "fused" (the permutation passed to
# torch.ops.w4a16.gemm). Every variant but "all" has down's permutation folded into gate/up's rows.
ACT_ORDER = {"none": (None, None, None, None), "all": ("is", "is", "is", "is"),
             "folded": ("is", "is", "is", None), "op": ("op", "op", "op", None),
             "mixed": ("is", "op", "is", None), "fused": ("fused", "fused", "fused", None)}
# The row keys of the act-order steps ("all" keeps its original key).
ACT_ORDER_KEY = {v: "step_act_order_us" if v == "all" else f"step_act_order_{v}_us"
                 for v in ACT_ORDER if v != "none"}


def make_layer_fn(kind: str, act_order: str, compile: bool = True) -> Callable:
    gathers = ACT_ORDER[act_order]

    def layer(h: torch.Tensor, ln1: torch.Tensor, ln2: torch.Tensor, qkv: Weights, o: Weights,
              gate_up: Weights, down: Weights, kc: torch.Tensor, vc: torch.Tensor,
              pos: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask: torch.Tensor,
              perms: List[torch.Tensor]) -> torch.Tensor:
        b = h.shape[0]
        x = rms_norm(h, ln1)
        y = linear(kind, x, qkv, perms[0], gathers[0])
        q = y[:, :HIDDEN].view(b, HEADS, 1, HEAD_DIM)
        k = y[:, HIDDEN:HIDDEN + KV_HEADS * HEAD_DIM].view(b, KV_HEADS, 1, HEAD_DIM)
        v = y[:, HIDDEN + KV_HEADS * HEAD_DIM:].view(b, KV_HEADS, 1, HEAD_DIM)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        kc.index_copy_(2, pos, k)
        vc.index_copy_(2, pos, v)
        att = F.scaled_dot_product_attention(q, kc, vc, attn_mask=mask, enable_gqa=True)
        h = h + linear(kind, att.reshape(b, HIDDEN), o, perms[1], gathers[1])
        x = rms_norm(h, ln2)
        gu = linear(kind, x, gate_up, perms[2], gathers[2])
        a = F.silu(gu[:, :INTER]) * gu[:, INTER:]
        return h + linear(kind, a, down, perms[3], gathers[3])
    if not compile:
        return layer
    return torch.compile(layer, fullgraph=True)  # batch 1 static; other batches one dynamic graph


class Model:
    """The decoder's weights for one variant, and its step."""

    def __init__(self, kind: str, layers: int, dev: torch.device, shared: Dict,
                 compile: bool = True) -> None:
        self.kind, self.layers, self.compile = kind, layers, compile
        self.w = [{name: make_weight(kind, n, k, dev) for name, (n, k) in LINEARS.items()}
                  for _ in range(layers)]
        self.head = None if kind == "bf16" else make_weight(kind, VOCAB, HIDDEN, dev)
        self.shared = shared
        self.fns: Dict[str, Callable] = {}

    def lm_head(self, x: torch.Tensor, quantized: bool) -> torch.Tensor:
        """The LM head: bf16, or quantized like the layers' linears."""
        if quantized:
            if self.head is None:
                raise ValueError("the bf16 variant has no quantized LM head")
            return linear(self.kind, x, self.head)
        return F.linear(x, self.shared["lm_head"])

    def step(self, tokens: torch.Tensor, pos: torch.Tensor, act_order: str = "none",
             linears_only: bool = False, quantized_head: bool = False) -> torch.Tensor:
        sh = self.shared
        fn = self.fns.get(act_order)
        if fn is None:
            fn = self.fns[act_order] = make_layer_fn(self.kind, act_order, self.compile)
        b = tokens.shape[0]
        h = sh["emb"][tokens]
        cos, sin = sh["cos"][pos].view(1, 1, 1, -1), sh["sin"][pos].view(1, 1, 1, -1)
        mask = sh["mask_table"][pos].view(1, 1, 1, -1)
        for i in range(self.layers):
            w = self.w[i]
            if linears_only:
                x = h
                linear(self.kind, x, w["qkv"])
                linear(self.kind, x, w["o"])
                linear(self.kind, x, w["gate_up"])
                linear(self.kind, sh["inter_in"][:b], w["down"])
                continue
            h = fn(h, sh["ln"], sh["ln"], w["qkv"], w["o"], w["gate_up"], w["down"],
                   sh["kc"][i][:b], sh["vc"][i][:b], pos, cos, sin, mask, sh["perms"])
        if linears_only:
            return self.lm_head(h, quantized_head)
        logits = self.lm_head(rms_norm(h, sh["ln"]), quantized_head)
        return logits.argmax(-1)

    def layer_kernels(self, act_order: str) -> List[str]:
        """The CUDA kernels one compiled layer launches at batch 1 (eager, outside a graph)."""
        sh, w = self.shared, self.w[0]
        fn = self.fns.get(act_order)
        if fn is None:
            fn = self.fns[act_order] = make_layer_fn(self.kind, act_order, self.compile)
        dev = sh["emb"].device
        h = sh["emb"][torch.zeros(1, dtype=torch.int64, device=dev)]
        pos = torch.tensor([CTX], device=dev)
        cos, sin = sh["cos"][pos].view(1, 1, 1, -1), sh["sin"][pos].view(1, 1, 1, -1)
        mask = sh["mask_table"][pos].view(1, 1, 1, -1)
        args = (h, sh["ln"], sh["ln"], w["qkv"], w["o"], w["gate_up"], w["down"],
                sh["kc"][0][:1], sh["vc"][0][:1], pos, cos, sin, mask, sh["perms"])
        for _ in range(2):
            fn(*args)
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            fn(*args)
            torch.cuda.synchronize()
        return [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", default="1,8,32")
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--json")
    ap.add_argument("--eager-layers", action="store_true",
                    help="run the layers without torch.compile (still in one CUDA graph)")
    ap.add_argument("--pdl", action="store_true",
                    help="also time the w4a16 step at batch 1 with the op's launches programmatic "
                    "(w4a16.ops.GEMM_FLAGS = 0) instead of W4A16_GEMM_NO_PDL")
    ap.add_argument("--profile", action="store_true",
                    help="list the kernels of one compiled layer per w4a16 act-order variant")
    ap.add_argument("--act-order", default=",".join(ACT_ORDER_KEY),
                    help="the w4a16 act-order variants timed at batch 1, comma-separated, of "
                    + ", ".join(ACT_ORDER_KEY) + " (default: all of them)")
    args = ap.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    variants = [v for v in args.act_order.split(",") if v]
    for v in variants:
        if v not in ACT_ORDER_KEY:
            ap.error(f"--act-order: unknown variant {v!r}; the variants are "
                     + ", ".join(ACT_ORDER_KEY))
    dev = torch.device("cuda")
    torch.manual_seed(0)
    bmax = max(batches)
    inv = 1.0 / (500000.0 ** (torch.arange(0, HEAD_DIM, 2, device=dev).float() / HEAD_DIM))
    ang = torch.arange(CTX + 64, device=dev).float()[:, None] * inv[None, :]
    positions = torch.arange(CTX + 64, device=dev)
    shared = {
        "emb": (torch.randn(VOCAB, HIDDEN, device=dev) * 0.02).to(DT),
        "lm_head": (torch.randn(VOCAB, HIDDEN, device=dev) * 0.02).to(DT),
        "ln": torch.ones(HIDDEN, device=dev, dtype=DT),
        "cos": ang.cos().to(DT),
        "sin": ang.sin().to(DT),
        "mask_table": positions[None, :] <= positions[:, None],
        "kc": [(torch.randn(bmax, KV_HEADS, CTX + 64, HEAD_DIM, device=dev) * 0.5).to(DT)
               for _ in range(args.layers)],
        "vc": [(torch.randn(bmax, KV_HEADS, CTX + 64, HEAD_DIM, device=dev) * 0.5).to(DT)
               for _ in range(args.layers)],
        "perms": [torch.randperm(k, device=dev).to(torch.int32) for (_, k) in LINEARS.values()],
        "inter_in": torch.randn(bmax, INTER, device=dev).to(DT),
    }
    pos = torch.tensor([CTX], device=dev)
    results: List[Dict] = []
    for kind in ("bf16", "w4a16", "int4"):
        model = Model(kind, args.layers, dev, shared, compile=not args.eager_layers)
        for b in batches:
            tokens = torch.randint(0, VOCAB, (b,), device=dev)
            step_us = graph_us(lambda: model.step(tokens, pos))
            lin_us = graph_us(lambda: model.step(tokens, pos, linears_only=True))
            if step_us < 0.9 * lin_us:
                print(f"WARNING: {kind} batch {b}: the step graph ({step_us:.0f} us) is shorter "
                      f"than its linears alone ({lin_us:.0f} us): work is missing from it",
                      flush=True)
            row = {"variant": kind, "batch": b, "step_us": step_us, "tokens_per_s":
                   b * 1e6 / step_us, "linears_us": lin_us}
            if kind == "w4a16" and b == 1:
                for v in variants:
                    row[ACT_ORDER_KEY[v]] = graph_us(lambda: model.step(tokens, pos, v))
                if args.pdl:  # the op's first kernels launched programmatically, as the C default
                    flags, w4a16.ops.GEMM_FLAGS = w4a16.ops.GEMM_FLAGS, 0
                    try:
                        row["step_pdl_us"] = graph_us(lambda: model.step(tokens, pos))
                    finally:
                        w4a16.ops.GEMM_FLAGS = flags
                if args.profile:
                    for v in ["none"] + variants:
                        names = model.layer_kernels(v)
                        print(f"# w4a16 layer kernels, act-order {v}: {len(names)}", flush=True)
                        for n in names:
                            print(f"#   {n[:110]}", flush=True)
            if kind != "bf16" and b == 1:
                row["step_quantized_head_us"] = graph_us(
                    lambda: model.step(tokens, pos, quantized_head=True))
            results.append(row)
            print(row, flush=True)
        del model  # free its weights before the next variant
        torch.cuda.empty_cache()
    print(f"\n# decode_bench: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"{args.layers} layers, context {CTX} (synthetic random weights)\n")
    print("| batch | variant | step us | tokens/s | linears us | rest us | vs bf16 |")
    print("|---|---|---|---|---|---|---|")
    for b in batches:
        base = next(r for r in results if r["variant"] == "bf16" and r["batch"] == b)
        for r in (r for r in results if r["batch"] == b):
            print(f"| {b} | {r['variant']} | {r['step_us']:.0f} | {r['tokens_per_s']:.1f} | "
                  f"{r['linears_us']:.0f} | {r['step_us'] - r['linears_us']:.0f} | "
                  f"{base['step_us'] / r['step_us']:.2f}x |")
    w1 = next(r for r in results if r["variant"] == "w4a16" and r["batch"] == 1)
    i1 = next(r for r in results if r["variant"] == "int4" and r["batch"] == 1)
    b1 = next(r for r in results if r["variant"] == "bf16" and r["batch"] == 1)
    print(f"\nbatch 1: w4a16 / int4 tokens/s {w1['tokens_per_s'] / i1['tokens_per_s']:.2f}x")
    if variants:
        print("batch 1, w4a16 act-order over no act-order ({:.0f} us; \"all\": index_select before "
              "all four linears; the others with down folded into gate/up): ".format(w1["step_us"])
              + ", ".join(f"{v} {w1[ACT_ORDER_KEY[v]]:.0f} us "
                          f"({100 * (w1[ACT_ORDER_KEY[v]] / w1['step_us'] - 1):+.1f} %)"
                          for v in variants))
    if args.pdl:
        print(f"batch 1, w4a16 with the op's launches programmatic (C's default): "
              f"{w1['step_pdl_us']:.0f} us ({b1['step_us'] / w1['step_pdl_us']:.2f}x bf16) against "
              f"{w1['step_us']:.0f} us with W4A16_GEMM_NO_PDL (the op's)")
    print(f"batch 1, LM head quantized too: w4a16 {w1['step_quantized_head_us']:.0f} us "
          f"({b1['step_us'] / w1['step_quantized_head_us']:.2f}x bf16), int4 "
          f"{i1['step_quantized_head_us']:.0f} us ({b1['step_us'] / i1['step_quantized_head_us']:.2f}x "
          f"bf16); w4a16 / int4 {i1['step_quantized_head_us'] / w1['step_quantized_head_us']:.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "layers": args.layers, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()

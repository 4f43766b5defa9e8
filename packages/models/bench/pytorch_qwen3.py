"""PyTorch eager side of bench/pytorch-compare.mjs: a small decoder forward written from the
architectures (RMSNorm, RoPE, grouped-query attention, SwiGLU, tied or untied head) with LoRA on the
linear layers, reading the same Hugging Face folder (D/model: one model.safetensors, or the shards
model.safetensors.index.json names) and PEFT adapter (D/adapter) as AgentFlow. The family is
config.json's model_type, as transformers picks it: qwen3 (q/k RMS norm per head; the default),
qwen2 (biases on q/k/v, none on o) or llama (q/k/v/o biases with attention_bias, gate/up/down
biases with mlp_bias); Qwen3's attention_bias likewise. RoPE's inverse frequencies are scaled as
rope_scaling says (default, linear, llama3), written from transformers' modeling_rope_utils. Also
the independent reader of src/weights/pytorch-reference.test.ts and pytorch-families.test.ts.

Tasks:
  lora      one forward+backward of the weighted completion NLL; gradients of the LoRA matrices only
  logprobs  log-probs of the completion tokens, no gradients, base model only
  full      one full-parameter training step: forward, backward with the gradient of every weight
            (the tied head's included in the embedding's), and one torch.optim.AdamW update with two
            parameter groups (decay on matrices; none on weights named *norm.weight or *.bias), with
            the hyper-parameters batch.json's "adamw" names and foreach as 1.13 defaults it

Usage: /usr/bin/python3 pytorch_qwen3.py --dir D --task lora|logprobs --steps N --threads T
         --out result.json [--dump outputs.safetensors]
--dump writes the first step's outputs: log-probs; with lora and full the loss and gradients; with
full also every weight after the AdamW update (param.<name>).
Prints nothing; writes timings (seconds since the process started) and VmHWM to --out.
"""

import time

START = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import struct  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

IMPORTED = time.perf_counter()

DTYPES = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16, "I64": torch.int64}
LINEARS = {
    "q_proj": "self_attn", "k_proj": "self_attn", "v_proj": "self_attn", "o_proj": "self_attn",
    "gate_proj": "mlp", "up_proj": "mlp", "down_proj": "mlp",
}


def read_safetensors(path):
    """Tensors of a safetensors file, sharing one buffer read from disk (no second copy)."""
    with open(path, "rb") as handle:
        buffer = bytearray(handle.read())
    size = struct.unpack("<Q", bytes(buffer[:8]))[0]
    header = json.loads(bytes(buffer[8:8 + size]))
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        dtype = DTYPES[info["dtype"]]
        count = (end - start) // torch.tensor([], dtype=dtype).element_size()
        flat = torch.frombuffer(buffer, dtype=dtype, count=count, offset=8 + size + start) if count else torch.empty(0, dtype=dtype)
        tensors[name] = flat.reshape(info["shape"]).float() if dtype != torch.int64 else flat.reshape(info["shape"])
    return tensors


def read_model_weights(folder):
    """The weights of a Hugging Face folder by transformers' names: model.safetensors, or every shard
    of model.safetensors.index.json, each tensor taken from the shard its weight_map names."""
    index_path = os.path.join(folder, "model.safetensors.index.json")
    if not os.path.exists(index_path):
        return read_safetensors(os.path.join(folder, "model.safetensors"))
    with open(index_path) as handle:
        weight_map = json.load(handle)["weight_map"]
    weights = {}
    for shard in sorted(set(weight_map.values())):
        for name, tensor in read_safetensors(os.path.join(folder, shard)).items():
            if weight_map.get(name) == shard:
                weights[name] = tensor
    missing = sorted(set(weight_map) - set(weights))
    if missing:
        raise SystemExit(f"{index_path}: {missing[0]} is not in {weight_map[missing[0]]}, the shard its weight_map names")
    return weights


def write_safetensors(path, tensors):
    header, chunks, offset = {}, [], 0
    for name, tensor in tensors.items():
        data = tensor.detach().contiguous().float().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensor.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    encoded = json.dumps(header).encode()
    encoded += b" " * (-len(encoded) % 8)
    with open(path, "wb") as handle:
        handle.write(struct.pack("<Q", len(encoded)) + encoded + b"".join(chunks))


def model_type(config):
    """The family transformers would load: model_type, else qwen3 (this script's first and default family)."""
    return config.get("model_type", "qwen3")


def biased_modules(config):
    """Linear modules whose nn.Linear has bias=True, as each family's modeling file builds them."""
    family = model_type(config)
    if family == "qwen2":
        return {"q_proj", "k_proj", "v_proj"}
    modules = {"q_proj", "k_proj", "v_proj", "o_proj"} if config.get("attention_bias", False) else set()
    if family == "llama" and config.get("mlp_bias", False):
        modules |= {"gate_proj", "up_proj", "down_proj"}
    return modules


def rope_inverse_frequencies(config, head_dim):
    """transformers' _compute_default_rope_parameters, _compute_linear_scaling_rope_parameters and
    _compute_llama3_parameters, in float32 as they compute it."""
    inv_freq = 1.0 / (config["rope_theta"] ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    scaling = config.get("rope_scaling") or {}
    rope_type = scaling.get("rope_type", scaling.get("type", "default"))
    if rope_type == "default":
        return inv_freq
    if rope_type == "linear":
        return inv_freq / scaling["factor"]
    if rope_type == "llama3":
        factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
        old_context = scaling["original_max_position_embeddings"]
        low_freq_wavelen, high_freq_wavelen = old_context / low, old_context / high
        wavelen = 2 * math.pi / inv_freq
        scaled = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
        smooth = (old_context / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
        return torch.where(medium, smoothed, scaled)
    raise SystemExit(f"rope_scaling type {rope_type!r} is not implemented here")


def rms_norm(x, weight, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def rotate_half(x):
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


class Decoder:
    """The decoder as plain functions over a dict of HF-named weights."""

    def __init__(self, config, weights, lora=None, lora_scale=0.0):
        self.config, self.weights, self.lora, self.lora_scale = config, weights, lora or {}, lora_scale
        self.head = weights.get("lm_head.weight", weights["model.embed_tokens.weight"])
        self.head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
        self.inv_freq = rope_inverse_frequencies(config, self.head_dim)
        self.biased = biased_modules(config)
        self.query_key_norm = model_type(config) == "qwen3"

    def linear(self, x, layer, module):
        path = f"model.layers.{layer}.{LINEARS[module]}.{module}"
        y = F.linear(x, self.weights[path + ".weight"], self.weights[path + ".bias"] if module in self.biased else None)
        adapter = self.lora.get(path)
        if adapter is not None:
            y = y + self.lora_scale * F.linear(F.linear(x, adapter[0]), adapter[1])
        return y

    def hidden(self, input_ids, attention_mask, position_ids):
        c, w = self.config, self.weights
        eps, heads, head_dim = c["rms_norm_eps"], c["num_attention_heads"], self.head_dim
        kv_heads = c.get("num_key_value_heads") or heads
        batch, sequence = input_ids.shape
        angles = position_ids[:, :, None].float() * self.inv_freq
        doubled = torch.cat((angles, angles), dim=-1)[:, None]  # [batch, 1, sequence, head_dim]
        cos, sin = doubled.cos(), doubled.sin()
        causal = torch.ones(sequence, sequence, dtype=torch.bool).tril()
        visible = causal[None, None, None] & attention_mask.bool()[:, None, None, None, :]
        bias = (visible.float() - 1.0) * 1e9  # [batch, 1, 1, sequence, sequence]
        x = F.embedding(input_ids, w["model.embed_tokens.weight"])
        for layer in range(c["num_hidden_layers"]):
            prefix = f"model.layers.{layer}"
            h = rms_norm(x, w[prefix + ".input_layernorm.weight"], eps)
            q = self.linear(h, layer, "q_proj").view(batch, sequence, heads, head_dim)
            k = self.linear(h, layer, "k_proj").view(batch, sequence, kv_heads, head_dim)
            if self.query_key_norm:
                q = rms_norm(q, w[prefix + ".self_attn.q_norm.weight"], eps)
                k = rms_norm(k, w[prefix + ".self_attn.k_norm.weight"], eps)
            v = self.linear(h, layer, "v_proj").view(batch, sequence, kv_heads, head_dim).transpose(1, 2)
            q, k = q.transpose(1, 2), k.transpose(1, 2)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            grouped = q.reshape(batch, kv_heads, heads // kv_heads, sequence, head_dim)  # GQA without copying keys
            scores = grouped @ k[:, :, None].transpose(-1, -2) * head_dim ** -0.5 + bias
            attended = scores.softmax(-1) @ v[:, :, None]
            merged = attended.reshape(batch, heads, sequence, head_dim).transpose(1, 2).reshape(batch, sequence, heads * head_dim)
            x = x + self.linear(merged, layer, "o_proj")
            h = rms_norm(x, w[prefix + ".post_attention_layernorm.weight"], eps)
            x = x + self.linear(F.silu(self.linear(h, layer, "gate_proj")) * self.linear(h, layer, "up_proj"), layer, "down_proj")
        return rms_norm(x, w["model.norm.weight"], eps)

    def completion_logprobs(self, batch):
        """[batch, completion] log p of each completion token; the head runs on completion positions only."""
        hidden = self.hidden(batch["input_ids"], batch["attention_mask"], batch["position_ids"])
        positions = batch["completion_positions"]
        picked = hidden.gather(1, positions[:, :, None].expand(-1, -1, hidden.shape[-1]))  # [batch, completion, hidden]
        logprobs = F.linear(picked, self.head).log_softmax(-1)
        return logprobs.gather(-1, batch["target_ids"].gather(1, positions)[:, :, None])[:, :, 0]


def load_batch(directory):
    with open(os.path.join(directory, "batch.json")) as handle:
        spec = json.load(handle)
    rows = [p + c for p, c in zip(spec["promptIds"], spec["completionIds"])]
    length = max(len(row) for row in rows)
    input_ids = torch.zeros(len(rows), length, dtype=torch.int64)
    mask = torch.zeros(len(rows), length, dtype=torch.int64)
    targets = torch.zeros(len(rows), length, dtype=torch.int64)
    for index, row in enumerate(rows):
        input_ids[index, : len(row)] = torch.tensor(row)
        mask[index, : len(row)] = 1
        targets[index, : len(row) - 1] = torch.tensor(row[1:])
    completion = max(len(c) for c in spec["completionIds"])
    positions = torch.zeros(len(rows), completion, dtype=torch.int64)
    weights = torch.zeros(len(rows), completion)
    for index, (prompt, row_weights) in enumerate(zip(spec["promptIds"], spec["tokenWeights"])):
        positions[index, : len(row_weights)] = torch.arange(len(prompt) - 1, len(prompt) - 1 + len(row_weights))
        weights[index, : len(row_weights)] = torch.tensor(row_weights)
    position_ids = torch.arange(length)[None].expand(len(rows), length)
    return {"input_ids": input_ids, "attention_mask": mask, "position_ids": position_ids, "target_ids": targets,
            "completion_positions": positions, "token_weights": weights}


def load_adamw(directory):
    """AdamW's hyper-parameters as batch.json's "adamw" gives them to both sides."""
    with open(os.path.join(directory, "batch.json")) as handle:
        return json.load(handle)["adamw"]


def decays(name):
    """transformers' convention, as AgentFlow's decaysWeight: no weight decay on norms and biases."""
    return not (name.endswith("norm.weight") or name.endswith(".bias"))


def full_parameter_adamw(parameters, adamw):
    """torch.optim.AdamW over every weight in two groups: matrices with weight decay, norms and biases without."""
    groups = [
        {"params": [p for name, p in parameters.items() if decays(name)], "weight_decay": adamw["weightDecay"]},
        {"params": [p for name, p in parameters.items() if not decays(name)], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=adamw["learningRate"], betas=(adamw["beta1"], adamw["beta2"]), eps=adamw["epsilon"])


def blas_library():
    """The BLAS shared library this process mapped (reference BLAS is 10x slower than OpenBLAS)."""
    with open("/proc/self/maps") as handle:
        paths = {line.split()[-1] for line in handle if "blas" in line.lower() and "/" in line}
    return sorted(paths)[0] if paths else None


def vm_hwm_bytes():
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--task", choices=["lora", "logprobs", "full"], required=True)
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", required=True)
    parser.add_argument("--dump")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    with open(os.path.join(args.dir, "model", "config.json")) as handle:
        config = json.load(handle)
    weights = read_model_weights(os.path.join(args.dir, "model"))
    for tensor in weights.values():
        tensor.requires_grad_(False)
    batch = load_batch(args.dir)
    lora, scale, optimizer = {}, 0.0, None
    if args.task == "lora":
        with open(os.path.join(args.dir, "adapter", "adapter_config.json")) as handle:
            adapter_config = json.load(handle)
        scale = adapter_config["lora_alpha"] / adapter_config["r"]
        matrices = read_safetensors(os.path.join(args.dir, "adapter", "adapter_model.safetensors"))
        for key, tensor in matrices.items():
            path = key[len("base_model.model."):].rsplit(".lora_", 1)[0]
            slot = 0 if ".lora_A." in key else 1
            lora.setdefault(path, [None, None])[slot] = tensor.clone().requires_grad_(True)
    if args.task == "full":
        # Parameters over the weights' own storage (no copy); the tied head is the embedding's.
        weights = {name: torch.nn.Parameter(tensor) for name, tensor in weights.items()}
        optimizer = full_parameter_adamw(weights, load_adamw(args.dir))
    model = Decoder(config, weights, lora, scale)
    loaded = time.perf_counter()
    steps, result, dump = [], None, {}
    for step in range(args.steps):
        began = time.perf_counter()
        if args.task == "lora":
            for pair in lora.values():
                pair[0].grad = pair[1].grad = None
            logprobs = model.completion_logprobs(batch)
            loss = -(logprobs * batch["token_weights"]).sum()
            loss.backward()
            result = (loss, logprobs)
        elif args.task == "full":
            optimizer.zero_grad(set_to_none=True)
            logprobs = model.completion_logprobs(batch)
            loss = -(logprobs * batch["token_weights"]).sum()
            loss.backward()
            if args.dump and step == 0:  # the gradients before the update changes nothing they depend on
                dump.update({f"grad.{name}": p.grad.clone() for name, p in weights.items()})
            optimizer.step()
            if args.dump and step == 0:
                dump.update({f"param.{name}": p.detach().clone() for name, p in weights.items()})
            result = (loss, logprobs)
        else:
            with torch.no_grad():
                result = (None, model.completion_logprobs(batch))
        steps.append(time.perf_counter() - began)
        if args.dump and step == 0:
            dump["logprobs"] = result[1]
            if args.task != "logprobs":
                dump["loss"] = result[0].reshape(1)
            for path, (a, b) in lora.items():
                dump[f"grad.lora.{path}.A"] = a.grad
                dump[f"grad.lora.{path}.B"] = b.grad
    if args.dump:
        write_safetensors(args.dump, dump)
    report = {
        "side": "pytorch", "task": args.task, "version": torch.__version__, "threads": torch.get_num_threads(), "blas": blas_library(),
        "import_s": IMPORTED - START, "load_s": loaded - IMPORTED, "steps_s": steps,
        "total_s": time.perf_counter() - START, "peak_rss_bytes": vm_hwm_bytes(),
        "parameters": sum(t.numel() for t in weights.values()),
    }
    with open(args.out, "w") as handle:
        json.dump(report, handle)


if __name__ == "__main__":
    main()

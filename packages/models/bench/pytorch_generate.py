"""PyTorch eager side of bench/generation-compare.mjs: batched sampling with a KV cache.

The decoder is pytorch_qwen3.py's (the same weights reader, RMSNorm, RoPE, grouped-query attention
and SwiGLU); what this file adds is a forward step over new tokens given each layer's cached keys
and values, grown with torch.cat per step as transformers' DynamicCache does, and temperature
sampling with torch.multinomial. The head runs on each row's last position only, as AgentFlow's
step does. Every row runs all --tokens steps (no EOS stop), so both sides compute rows x tokens.

Usage: /usr/bin/python3 pytorch_generate.py --dir D --repeats N --warmup W --threads T --out result.json
D holds model/ (a Hugging Face folder), adapter/ (a PEFT adapter, run as pytorch_qwen3's LoRA) and prompts.json ({"promptIds": [[...]], "maxTokens": 128,
"temperature": 1}). Writes timings (seconds since the process started) and VmHWM to --out.
"""

import time

START = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_qwen3 import Decoder, blas_library, read_model_weights, read_safetensors, rms_norm, rotate_half, vm_hwm_bytes  # noqa: E402

IMPORTED = time.perf_counter()


class CachedDecoder(Decoder):
    """pytorch_qwen3's Decoder with a KV cache: step() runs only the new tokens."""

    def step(self, input_ids, attention_mask, position_ids, cache):
        """Logits of each row's last position, [batch, vocab]; cache (per layer [keys, values],
        each [batch, kv_heads, past, head_dim]) is extended in place. attention_mask covers past + new."""
        c, w = self.config, self.weights
        eps, heads, head_dim = c["rms_norm_eps"], c["num_attention_heads"], self.head_dim
        kv_heads = c.get("num_key_value_heads") or heads
        batch, sequence = input_ids.shape
        past = cache[0][0].shape[2] if cache[0] else 0
        total = past + sequence
        angles = position_ids[:, :, None].float() * self.inv_freq
        doubled = torch.cat((angles, angles), dim=-1)[:, None]  # [batch, 1, sequence, head_dim]
        cos, sin = doubled.cos(), doubled.sin()
        # Query i (at absolute index past + i) sees keys 0..past + i that the mask keeps.
        causal = torch.ones(sequence, total, dtype=torch.bool).tril(diagonal=past)
        visible = causal[None, None, None] & attention_mask.bool()[:, None, None, None, :]
        bias = (visible.float() - 1.0) * 1e9  # [batch, 1, 1, sequence, total]
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
            if cache[layer]:
                k = torch.cat((cache[layer][0], k), dim=2)
                v = torch.cat((cache[layer][1], v), dim=2)
            cache[layer] = [k, v]
            grouped = q.reshape(batch, kv_heads, heads // kv_heads, sequence, head_dim)
            scores = grouped @ k[:, :, None].transpose(-1, -2) * head_dim ** -0.5 + bias
            attended = scores.softmax(-1) @ v[:, :, None]
            merged = attended.reshape(batch, heads, sequence, head_dim).transpose(1, 2).reshape(batch, sequence, heads * head_dim)
            x = x + self.linear(merged, layer, "o_proj")
            h = rms_norm(x, w[prefix + ".post_attention_layernorm.weight"], eps)
            x = x + self.linear(F.silu(self.linear(h, layer, "gate_proj")) * self.linear(h, layer, "up_proj"), layer, "down_proj")
        last = rms_norm(x[:, -1], w["model.norm.weight"], eps)
        return F.linear(last, self.head)

    def generate(self, prompt_ids, max_tokens, temperature, generator):
        """Prefill, then max_tokens draws per row; returns the drawn ids and their log-probs."""
        input_ids = torch.tensor(prompt_ids, dtype=torch.int64)
        batch, length = input_ids.shape
        cache = [None] * self.config["num_hidden_layers"]
        mask = torch.ones(batch, length, dtype=torch.int64)
        positions = torch.arange(length)[None].expand(batch, length)
        drawn, logprobs = [], []
        logits = self.step(input_ids, mask, positions, cache)
        for index in range(max_tokens):
            token = torch.multinomial((logits / temperature).softmax(-1), 1, generator=generator)  # [batch, 1]
            logprobs.append(logits.log_softmax(-1).gather(-1, token))
            drawn.append(token)
            if index + 1 == max_tokens:
                break
            mask = torch.cat((mask, torch.ones(batch, 1, dtype=torch.int64)), dim=1)
            positions = positions[:, -1:] + 1
            logits = self.step(token, mask, positions, cache)
        return torch.cat(drawn, dim=1), torch.cat(logprobs, dim=1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    with open(os.path.join(args.dir, "model", "config.json")) as handle:
        config = json.load(handle)
    with open(os.path.join(args.dir, "prompts.json")) as handle:
        spec = json.load(handle)
    weights = read_model_weights(os.path.join(args.dir, "model"))
    # The PEFT adapter AgentFlow's policy feeds (B = 0 as PEFT starts it), so both sides run its matrices.
    with open(os.path.join(args.dir, "adapter", "adapter_config.json")) as handle:
        adapter_config = json.load(handle)
    lora = {}
    for key, tensor in read_safetensors(os.path.join(args.dir, "adapter", "adapter_model.safetensors")).items():
        path = key[len("base_model.model."):].rsplit(".lora_", 1)[0]
        lora.setdefault(path, [None, None])[0 if ".lora_A." in key else 1] = tensor
    model = CachedDecoder(config, weights, lora, adapter_config["lora_alpha"] / adapter_config["r"])
    loaded = time.perf_counter()
    generator = torch.Generator().manual_seed(0)
    times, first_done = [], None
    with torch.no_grad():
        for _ in range(args.warmup + args.repeats):
            began = time.perf_counter()
            tokens, _ = model.generate(spec["promptIds"], spec["maxTokens"], spec["temperature"], generator)
            times.append(time.perf_counter() - began)
            first_done = first_done or time.perf_counter() - START
    report = {
        "side": "pytorch", "version": torch.__version__, "threads": torch.get_num_threads(), "blas": blas_library(),
        "import_s": IMPORTED - START, "load_s": loaded - IMPORTED, "first_done_s": first_done, "generations_s": times,
        "tokens": int(tokens.numel()), "peak_rss_bytes": vm_hwm_bytes(),
    }
    with open(args.out, "w") as handle:
        json.dump(report, handle)


if __name__ == "__main__":
    main()

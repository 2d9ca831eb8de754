# Generator of golden_input.json (invented values); rerun with python3 after editing, then go test -update.
import json
import os
# Deterministic small calibration dataset for report's golden tests (invented values).
hdr = {"Mode": "real", "WarmUpRequests": 2, "WorkloadSeed": 42, "WorkloadSpec": "chat.yaml",
       "Server": {"Model": "meta-llama/Llama-3.1-8B", "TensorParallel": 1, "MaxNumSeqs": 256, "BlockSize": 16},
       "MeasuredRTTMs": 1.5,
       "GoodputSLOTargets": {"critical": {"ttft_ms": 200, "e2e_ms": 3000}, "standard": {"ttft_ms": 500, "itl_ms": 30}},
       "ObservedKV": {"Source": "gpu-prefix-cache-fallback", "HitRate": 0.412},
       "Deployment": {"model": "meta-llama/Llama-3.1-8B", "tensor_parallel": 1, "max_num_seqs": 256, "block_size": 16,
                      "total_kv_blocks": 9000},
       "Sources": {"block_size": "measured", "total_kv_blocks": "measured", "gpu": "absent"}}
trace, sim, itl = [], [], []
for i in range(32):
    send = 1 + i * 200_000
    cls = ["critical", "standard", ""][i % 3]
    model = "lora-a" if i % 5 == 0 else ""
    prompt = 200 + (i * 137) % 1800
    out = 20 + (i * 53) % 90
    queue = (i % 4) * 15_000
    ttft = 30_000 + prompt * 20 + queue
    tpot = 11_000 + (i % 6) * 900
    e2e = ttft + tpot * (out - 1) + 2_000
    rec = {"RequestID": i, "ClientID": "c%d" % (i % 2), "SLOClass": cls, "Model": model, "Streaming": True,
           "InputTokens": prompt, "OutputTokens": out, "ArrivalTimeUs": send, "SendTimeUs": send + (i % 3) * 300,
           "FirstChunkTimeUs": 0, "LastChunkTimeUs": 0, "NumChunks": out + 2, "Status": "ok", "FinishReason": "stop",
           "CachedTokens": 0 if i < 4 else 16 * (i % 3)}
    s = rec["SendTimeUs"]
    rec["FirstChunkTimeUs"] = s + ttft
    rec["LastChunkTimeUs"] = s + e2e
    if i == 2:
        rec["Status"], rec["ErrorMessage"], rec["FirstChunkTimeUs"], rec["LastChunkTimeUs"] = "error", "HTTP 503: overloaded", 0, 0
    if i == 4:
        rec["FirstChunkTimeUs"] = 0
    if i == 5:
        rec["ServerInputTokens"] = prompt + 7  # chat template tokens
    trace.append(rec)
    if i == 3:
        continue  # unmatched real
    noise = ((i * 37) % 11 - 5) / 100.0  # -5% .. +5%
    rtt = 1500
    sttft = round(ttft * (1 + noise) - rtt, 1)
    sitl = round(tpot * (1 - noise / 2), 1)
    se2e = round(sttft + sitl * (out - 1) + 1800, 1)
    sr = {"request_id": i, "ttft_us": sttft, "e2e_us": se2e, "input_tokens": prompt, "output_tokens": out,
          "itl_mean_us": sitl, "arrival_us": send}
    if cls:
        sr["slo_class"] = cls
    if model:
        sr["model"] = model
    sim.append(sr)
    if 6 <= i <= 13:
        # chunk 0 is the role-only chunk, then one per token, then the usage chunk
        t0 = rec["FirstChunkTimeUs"]
        ts = [t0, t0 + 300]
        for k in range(1, out):
            ts.append(ts[-1] + tpot + ((k * 7 + i) % 5 - 2) * 400)
        ts.append(ts[-1] + 500)
        if i == 9:
            ts = [t0 + 1000 - 10 * k for k in range(4)]  # clock skew: every difference negative
        for k, t in enumerate(ts):
            itl.append({"RequestID": i, "ChunkIndex": k, "TimestampUs": t})
sim.append({"request_id": 40, "ttft_us": 1000, "e2e_us": 2000, "input_tokens": 10, "output_tokens": 2, "arrival_us": 0})
locs = ["golden.csv:%d" % (k + 2) for k in range(len(trace))]
doc = {"header": hdr, "trace": trace, "trace_locs": locs, "sim": sim, "itl": itl, "itl_given": True,
       "sim_metrics": {"CacheHitRate": 0.387, "Deployment": {"model": "meta-llama/llama-3.1-8b", "tensor_parallel": 1,
                                                              "max_num_seqs": 128, "block_size": 16, "gpu_memory_utilization": 0.9,
                                                              "gpu": "H100", "total_kv_blocks": 9000, "scheduler": "fcfs",
                                                              "pd_transfer_base_latency": "50\u00b5s"}}}
out = ["{"]
keys = list(doc)
for n, k in enumerate(keys):
    v = doc[k]
    comma = "," if n < len(keys) - 1 else ""
    if isinstance(v, list):
        out.append(' "%s": [' % k)
        for m, item in enumerate(v):
            out.append("  " + json.dumps(item, separators=(",", ":")) + ("," if m < len(v) - 1 else ""))
        out.append(" ]" + comma)
    else:
        out.append(' "%s": %s%s' % (k, json.dumps(v, separators=(",", ":")), comma))
out.append("}")
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden_input.json"), "w").write("\n".join(out) + "\n")

"""The first call in a fresh process: how long flashtune's first forward and first backward take
(kernels found or compiled, modules loaded), with the CUBIN cache on disk empty (cold) and then
filled by the cold run (warm), each in a new Python process, after PyTorch's own first-use costs
(the CUDA context, a GEMM, the loss's kernels, autograd's first backward). The backward is a
training loop's: loss.backward() of a scalar loss. Also the same for SDPA's default backend,
and the import of flashtune. bf16, causal, B 2, H 8, N 1024, D 128 (the library's shipped
winners hold this shape's neighbours, so no tuning database is needed).

Run: FLASHTUNE_LIBRARY=build/runtime/libflashtune.so python3 bench/first_call.py"""
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import torch
# PyTorch's own first-use costs out of the way before timing: the CUDA context, a GEMM, the loss's
# kernels, autograd's first backward (its device threads)
x = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
((x @ x).float() * x).sum().backward()
torch.cuda.synchronize()
t1 = time.perf_counter()
sys.path.insert(0, sys.argv[2])
import flashtune
t2 = time.perf_counter()
q, k, v = (torch.randn(2, 8, 1024, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
do = torch.randn(2, 8, 1024, 128, device="cuda", dtype=torch.bfloat16)
fn = flashtune.attention if sys.argv[1] == "flashtune" else torch.nn.functional.scaled_dot_product_attention
torch.cuda.synchronize()
t3 = time.perf_counter()
o = fn(q, k, v, is_causal=True)
torch.cuda.synchronize()
t4 = time.perf_counter()
(o.float() * do).sum().backward()   # a training loop's backward: of a scalar loss
torch.cuda.synchronize()
t5 = time.perf_counter()
# a second problem (other lengths: another kernel configuration, its first call too)
q2, k2, v2 = (torch.randn(2, 8, 1000, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
torch.cuda.synchronize()
t6 = time.perf_counter()
o2 = fn(q2, k2, v2, is_causal=True)
(o2.float() * o2.detach().float()).sum().backward()
torch.cuda.synchronize()
t7 = time.perf_counter()
print(json.dumps({"torch_and_context_s": t1 - t0, "import_flashtune_s": t2 - t1, "first_forward_ms": (t4 - t3) * 1e3,
                  "first_backward_ms": (t5 - t4) * 1e3, "second_problem_ms": (t7 - t6) * 1e3}))
"""


def run(impl, cache_dir):
    env = dict(os.environ, FLASHTUNE_CACHE_DIR=cache_dir)
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, "-c", CHILD, impl, os.path.join(here, "..", "python")], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    with tempfile.TemporaryDirectory() as cache:
        rows = [("flashtune, cold cache", run("flashtune", cache)),
                ("flashtune, warm cache", run("flashtune", cache)),
                ("flashtune, warm cache again", run("flashtune", cache)),
                ("SDPA default", run("sdpa", cache))]
        cached = sorted(os.listdir(cache))
    print("| run | first forward ms | first backward ms | forward + backward ms | another problem's first "
          "forward + backward ms | import flashtune s |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in rows:
        print(f"| {name} | {r['first_forward_ms']:.1f} | {r['first_backward_ms']:.1f} | "
              f"{r['first_forward_ms'] + r['first_backward_ms']:.1f} | {r['second_problem_ms']:.1f} | "
              f"{r['import_flashtune_s']:.3f} |")
    print(f"CUBINs cached by the cold run: {len(cached)}")


if __name__ == "__main__":
    main()

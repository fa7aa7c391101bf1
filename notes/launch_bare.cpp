// Bare driver launch loop: what cuLaunchKernel costs on this host, beside gpukit's plan.
#include <dlfcn.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
#include <algorithm>
typedef int CUresult; typedef void* CUctx; typedef void* CUmod; typedef void* CUfn; typedef void* CUstream;
#define F(name, ...) typedef CUresult (*name##_t)(__VA_ARGS__); name##_t name;
F(cuInit, unsigned) F(cuDeviceGet, int*, int) F(cuDevicePrimaryCtxRetain, CUctx*, int)
F(cuCtxSetCurrent, CUctx) F(cuModuleLoadData, CUmod*, const void*) F(cuModuleGetFunction, CUfn*, CUmod, const char*)
F(cuStreamCreate, CUstream*, unsigned) F(cuStreamSynchronize, CUstream)
F(cuLaunchKernel, CUfn, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, void**)
static const char* ptx =
  ".version 8.0\n.target sm_90\n.address_size 64\n"
  ".visible .entry e() { ret; }\n"
  ".visible .entry p(.param .align 8 .b8 a[104]) { ret; }\n";
#define CK(x) do { CUresult r = (x); if (r) { printf("%s -> %d\n", #x, r); return 1; } } while (0)
using clk = std::chrono::steady_clock;
int main() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW);
  if (!h) { printf("no libcuda\n"); return 1; }
#define B(n) n = (n##_t)dlsym(h, #n); if (!n) { printf("missing %s\n", #n); return 1; }
  B(cuInit) B(cuDeviceGet) B(cuCtxSetCurrent) B(cuModuleLoadData) B(cuModuleGetFunction)
  B(cuStreamCreate) B(cuStreamSynchronize) B(cuLaunchKernel)
  cuDevicePrimaryCtxRetain = (cuDevicePrimaryCtxRetain_t)dlsym(h, "cuDevicePrimaryCtxRetain");
  int dev; CUctx ctx; CUmod m; CUfn fe, fp; CUstream s;
  CK(cuInit(0)); CK(cuDeviceGet(&dev, 0)); CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  CK(cuModuleLoadData(&m, ptx)); CK(cuModuleGetFunction(&fe, m, "e")); CK(cuModuleGetFunction(&fp, m, "p"));
  CK(cuStreamCreate(&s, 1));
  alignas(8) unsigned char args[104]; memset(args, 0, sizeof args);
  size_t size = sizeof args;
  void* extra[] = {(void*)1, args, (void*)2, &size, nullptr};
  void* params[] = {args};
  struct Row { const char* name; int kind; CUstream st; };
  Row rows[] = {{"empty, no params, non-blocking stream", 0, s}, {"104-byte params, kernelParams", 1, s},
                {"104-byte params, extra buffer", 2, s}, {"empty, legacy default stream", 0, nullptr}};
  printf("%-42s %10s %10s %10s\n", "bare cuLaunchKernel", "burst200", "enq20000", "wall20000");
  for (auto& r : rows) {
    auto launch = [&] {
      CUresult e = r.kind == 0 ? cuLaunchKernel(fe, 1,1,1, 32,1,1, 0, r.st, nullptr, nullptr)
                 : r.kind == 1 ? cuLaunchKernel(fp, 1,1,1, 32,1,1, 0, r.st, params, nullptr)
                               : cuLaunchKernel(fp, 1,1,1, 32,1,1, 0, r.st, nullptr, extra);
      if (e) { printf("launch failed %d\n", e); exit(1); }
    };
    for (int i = 0; i < 2000; ++i) launch();
    cuStreamSynchronize(r.st);
    double burst = 1e9, enq = 1e9, wall = 1e9;
    for (int rep = 0; rep < 20; ++rep) {
      auto t0 = clk::now(); for (int i = 0; i < 200; ++i) launch(); auto t1 = clk::now();
      cuStreamSynchronize(r.st);
      burst = std::min(burst, std::chrono::duration<double, std::micro>(t1 - t0).count() / 200);
    }
    for (int rep = 0; rep < 5; ++rep) {
      auto t0 = clk::now(); for (int i = 0; i < 20000; ++i) launch(); auto t1 = clk::now();
      cuStreamSynchronize(r.st); auto t2 = clk::now();
      enq = std::min(enq, std::chrono::duration<double, std::micro>(t1 - t0).count() / 20000);
      wall = std::min(wall, std::chrono::duration<double, std::micro>(t2 - t0).count() / 20000);
    }
    printf("%-42s %10.3f %10.3f %10.3f\n", r.name, burst, enq, wall);
  }
  return 0;
}

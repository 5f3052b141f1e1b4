/* device.c - current-device properties and the architecture guard. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "w4a16_build_config.h"

#define W4A16_MAX_DEVICES 64

static struct {
  atomic_int state; /* 0 unknown, 1 being filled (by the thread that claimed it), 2 filled */
  w4a16_device_info info;
} g_devices[W4A16_MAX_DEVICES];

w4a16_status w4a16_current_device(w4a16_device_info *info) {
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
    cudaGetLastError();
    return w4a16_fail(W4A16_STATUS_NO_DEVICE, "no CUDA device is present (%s)", cudaGetErrorString(e));
  }
  if (e != cudaSuccess) return w4a16_fail_cuda((int)e, "cudaGetDevice");
  if (dev >= 0 && dev < W4A16_MAX_DEVICES && atomic_load(&g_devices[dev].state) == 2) {
    *info = g_devices[dev].info;
    return W4A16_STATUS_OK;
  }
  int major = 0, minor = 0, sms = 0, smem = 0;
  if ((e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) != cudaSuccess ||
      (e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev)) != cudaSuccess ||
      (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
      (e = cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) != cudaSuccess) {
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
      return w4a16_fail(W4A16_STATUS_NO_DEVICE, "no CUDA device is present (%s)", cudaGetErrorString(e));
    return w4a16_fail_cuda((int)e, "cudaDeviceGetAttribute");
  }
  /* the peak DRAM bandwidth (the heuristic's H200 rows): a device or driver that does not report
     its memory clock or bus width leaves it unknown (0) */
  int mem_khz = 0, bus_bits = 0;
  if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess) {
    cudaGetLastError();
    mem_khz = bus_bits = 0;
  }
  const long long gbps = 2ll * mem_khz * bus_bits / 8 / 1000000;
  w4a16_device_info d = {dev, major * 10 + minor, sms, smem, gbps > 0 && gbps < (1ll << 30) ? (int)gbps : 0};
  int unknown = 0; /* one thread fills the record; the others, meanwhile, use their own copy */
  if (dev >= 0 && dev < W4A16_MAX_DEVICES && atomic_compare_exchange_strong(&g_devices[dev].state, &unknown, 1)) {
    g_devices[dev].info = d;
    atomic_store(&g_devices[dev].state, 2);
  }
  *info = d;
  return W4A16_STATUS_OK;
}

/* probe results per (device, kernel): 0 unknown, 1 runs, 2 no image */
static atomic_schar *g_probe;
static size_t g_probe_kernels;
static pthread_once_t g_probe_once = PTHREAD_ONCE_INIT;

static void probe_init(void) {
  size_t n;
  w4a16_registry_table(&n);
  g_probe = calloc(n * W4A16_MAX_DEVICES + 1, sizeof *g_probe);
  g_probe_kernels = g_probe ? n : 0;
}

static void arch_string(int cc, char *buf, size_t n) {
  snprintf(buf, n, "sm_%d (compute capability %d.%d)", cc, cc / 10, cc % 10);
}

w4a16_status w4a16_kernel_runs_here(const w4a16_kernel_desc *kd, const w4a16_device_info *info) {
  char here[64]; /* formatted only for a message: this runs on every launch */
  if (info->cc < kd->sm_min || info->cc > kd->sm_max) {
    arch_string(info->cc, here, sizeof here);
    if (kd->sm_min == kd->sm_max)
      return w4a16_fail(W4A16_STATUS_ARCH_MISMATCH,
                        "kernel %s was built for %s and runs only on compute capability %d.%d; the device is %s",
                        kd->name, kd->arch, kd->sm_min / 10, kd->sm_min % 10, here);
    return w4a16_fail(W4A16_STATUS_ARCH_MISMATCH,
                      "kernel %s was built for %s (compute capability >= %d.%d); the device is %s", kd->name,
                      kd->arch, kd->sm_min / 10, kd->sm_min % 10, here);
  }
  if (kd->smem_bytes > info->max_smem_optin) {
    arch_string(info->cc, here, sizeof here);
    return w4a16_fail(W4A16_STATUS_ARCH_MISMATCH,
                      "kernel %s needs %d bytes of shared memory per block; the device (%s) allows %d", kd->name,
                      kd->smem_bytes, here, info->max_smem_optin);
  }
  if (!kd->impl || !kd->impl->probe)
    return w4a16_fail(W4A16_STATUS_NOT_SUPPORTED, "kernel %s has no compiled implementation", kd->name);
  pthread_once(&g_probe_once, probe_init);
  size_t count;
  const w4a16_kernel_desc *table = w4a16_registry_table(&count);
  atomic_schar *slot = NULL;
  if (g_probe && kd >= table && kd < table + count && info->ordinal >= 0 && info->ordinal < W4A16_MAX_DEVICES)
    slot = &g_probe[(size_t)info->ordinal * g_probe_kernels + (size_t)(kd - table)];
  int state = slot ? atomic_load(slot) : 0;
  if (state == 0) {
    int e = kd->impl->probe();
    if (e != 0) cudaGetLastError(); /* clear the sticky-free error the probe left */
    state = e == 0 ? 1 : 2;
    if (slot) atomic_store(slot, (signed char)state);
  }
  if (state == 2) {
    arch_string(info->cc, here, sizeof here);
    return w4a16_fail(W4A16_STATUS_ARCH_MISMATCH,
                      "kernel %s (%s) has no machine code or PTX for the device %s; this library was built for %s",
                      kd->name, kd->arch, here, W4A16_BUILT_ARCHS);
  }
  return W4A16_STATUS_OK;
}

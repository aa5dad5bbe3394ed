/* The bare-QEMU boot floor shared by the benchmarks (bench/boot, bench/gate):
 * the same kernel file airlock boots, under qemu-system-* with the machine,
 * CPU model, memory and kernel command line tokens airlock's domain uses,
 * and an initramfs holding only guest/floor-init, which prints one marker
 * line and powers off.  Its "ready" is QEMU's spawn to the marker on the
 * serial console: the kernel booted and ran init. */
#pragma once

#include "airlock.h"

G_BEGIN_DECLS

/* What airlock's domain gives the guest (lib/vm/vm.c defaults). */
#define BENCH_FLOOR_MEMORY_MIB 512

typedef struct {
  double ready;   /* spawn → marker on the console */
  double exit;    /* spawn → QEMU reaped */
} FloorSample;

/* One arch's floor (all borrowed). */
typedef struct {
  AirlockArch arch;
  const char *qemu;              /* qemu-system-* */
  const char *kernel_path;       /* the guest image's kernel */
  const char *initrd;            /* bench_floor_write_initrd () */
  const char *cmdline_tokens;    /* after console=; NULL: the tokens airlock's domain of this
                                  * arch gets under TCG (airlock_domain_kernel_tokens ()),
                                  * to which airlock adds only airlock.* tokens for its init */
  char **extra_args;             /* appended to QEMU's command line, or NULL */
} BenchFloor;

/* $AIRLOCK_QEMU_X86_64 / $AIRLOCK_QEMU_AARCH64, else the configured path. */
char *bench_floor_qemu_for_arch (AirlockArch arch);
/* The first line of `QEMU --version`, or "unknown". */
char *bench_floor_qemu_version (const char *qemu);
/* Writes an initramfs holding only /init = floor-init-<arch> into @tmp_dir.
 * Returns its path, or NULL with @error set. */
char *bench_floor_write_initrd (AirlockArch arch, const char *tmp_dir, GError **error);
/* Boots the floor once.  Returns FALSE with @error set when QEMU cannot be
 * spawned, the marker does not appear, QEMU does not exit in time (it is
 * then killed), or it exits with a failure (the console's tail is printed). */
gboolean bench_floor_run (const BenchFloor *floor, FloorSample *ret_sample, GError **error);
/* Prints the last bytes of @data to stderr, prefixed with the program name. */
void bench_print_tail (const char *what, const guint8 *data, gsize len);

G_END_DECLS

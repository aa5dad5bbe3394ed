/* The kernel stage of a guest image: the boot kernel and the modules the
 * initramfs needs, with their indexes, extracted once per kernel and
 * modules list (kernel-stage.c); kernel.json records it (manifest.c). */
#pragma once

#include "guestimg/manifest-private.h"

G_BEGIN_DECLS

/* Builds the kernel stage for @in into the empty directory @tmp: the
 * kernel to boot, the modules the guest needs and their indexes,
 * kernel.json last.  Scratch files (the extracted package, ~400 MB) go to
 * @tmp/.work and are removed on success; on failure the caller removes
 * @tmp. */
gboolean airlock_guest_kernel_stage_build (AirlockGuestInputs *in, const char *tmp,
                                           const AirlockGuestImageOptions *options,
                                           GError **error);

G_END_DECLS

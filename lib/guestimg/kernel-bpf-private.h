/* The scan behind airlock_guest_image_read_kernel_bpf() (kernel-bpf.c), on
 * bytes, for the unit tests. */
#pragma once

#include "guestimg/guest-image.h"

#include <glib.h>

G_BEGIN_DECLS

/* What the kernel image @data offers the kernel-hook recorder: from the
 * first valid BTF header in it and its string table. */
AirlockKernelBpf airlock_kernel_bpf_scan (const guint8 *data, gsize len);

G_END_DECLS

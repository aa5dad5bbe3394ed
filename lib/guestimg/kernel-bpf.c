/* What a guest kernel offers the kernel-hook recorder, read from the BTF
 * inside the kernel image itself (guest-image.h, AirlockKernelBpf).
 *
 * The recorder's programs are CO-RE: PID 1 relocates them against the
 * running kernel's BTF (/sys/kernel/btf/vmlinux), which the kernel serves
 * from a copy built into its own image (the .BTF section, loaded with the
 * rest).  So the boot kernel airlock caches (the vmlinux ELF extracted from
 * a bzImage, the arm64 Image) holds the same bytes, and whether the
 * recorder can load is known before a boot: no BTF, no recorder.  BPF LSM
 * (CONFIG_BPF_LSM) adds a function bpf_lsm_<hook> per LSM hook, the
 * attach points of LSM programs; their names in BTF's string table say the
 * kernel was built with it.
 *
 * Hand-written: a header check and two name lookups.  libbpf's btf__new()
 * parses the same header, but would make libbpf a run-time dependency of
 * libairlock for this one question. */
#define _GNU_SOURCE /* memmem */

#include "config.h"

#include "guestimg/guest-image.h"
#include "guestimg/kernel-bpf-private.h"

#include <string.h>

/* struct btf_header (include/uapi/linux/btf.h): magic 0xeB9F, version 1,
 * flags, hdr_len, then the type and string sections' offsets and lengths
 * from the header's end.  Little-endian on both guest arches. */
#define BTF_HEADER_MIN 24
static const guint8 btf_magic[] = { 0x9f, 0xeb, 0x01 };

static guint32
le32 (const guint8 *p)
{
  return (guint32) p[0] | (guint32) p[1] << 8 | (guint32) p[2] << 16 | (guint32) p[3] << 24;
}

/* TRUE if @name is one of the NUL-separated strings in @strings. */
static gboolean
has_string (const guint8 *strings, gsize len, const char *name)
{
  gsize n = strlen (name);
  const guint8 *p = strings, *end = strings + len;

  while (p < end)
    {
      const guint8 *hit = memmem (p, (gsize) (end - p), name, n + 1);

      if (!hit)
        return FALSE;
      if (hit == strings || hit[-1] == '\0')
        return TRUE;
      p = hit + 1;
    }
  return FALSE;
}

AirlockKernelBpf
airlock_kernel_bpf_scan (const guint8 *data, gsize len)
{
  const guint8 *p = data, *end = data + len;

  while (p < end)
    {
      const guint8 *h = memmem (p, (gsize) (end - p), btf_magic, sizeof btf_magic);
      guint32 hdr_len, type_off, type_len, str_off, str_len;
      gsize room;
      const guint8 *strings;

      if (!h)
        break;
      p = h + 1;
      room = (gsize) (end - h);
      if (room < BTF_HEADER_MIN)
        break;
      hdr_len = le32 (h + 4);
      type_off = le32 (h + 8);
      type_len = le32 (h + 12);
      str_off = le32 (h + 16);
      str_len = le32 (h + 20);
      /* A real header, not the magic's three bytes met by chance: every
       * section inside the data, a string table that starts and ends with
       * NUL, as the kernel's own btf_parse_hdr() and btf_parse_str_sec()
       * require. */
      if (hdr_len < BTF_HEADER_MIN || hdr_len > room || str_len == 0
          || (guint64) type_off + type_len > room - hdr_len
          || (guint64) str_off + str_len > room - hdr_len)
        continue;
      strings = h + hdr_len + str_off;
      if (strings[0] != '\0' || strings[str_len - 1] != '\0')
        continue;
      if (has_string (strings, str_len, "bpf_lsm_socket_connect")
          && has_string (strings, str_len, "bpf_lsm_socket_sendmsg"))
        return AIRLOCK_KERNEL_BPF_LSM;
      return AIRLOCK_KERNEL_BPF_BTF;
    }
  return AIRLOCK_KERNEL_BPF_NO_BTF;
}

gboolean
airlock_guest_image_read_kernel_bpf (const AirlockGuestImage *image, AirlockKernelBpf *ret_bpf,
                                     GError **error)
{
  g_autoptr (GError) local_error = NULL;
  g_autoptr (GMappedFile) mapped = g_mapped_file_new (image->kernel_path, FALSE, &local_error);

  if (!mapped)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot read the guest kernel '%s': %s", image->kernel_path,
                   local_error->message);
      return FALSE;
    }
  *ret_bpf = airlock_kernel_bpf_scan ((const guint8 *) g_mapped_file_get_contents (mapped),
                                      g_mapped_file_get_length (mapped));
  return TRUE;
}

const char *
airlock_kernel_bpf_describe (AirlockKernelBpf bpf)
{
  switch (bpf)
    {
    case AIRLOCK_KERNEL_BPF_LSM:
      return "BTF and BPF LSM: the kernel-hook recorder loads (LSM hooks where the kernel "
             "attaches them, else kprobes: docs/supervisor.md)";
    case AIRLOCK_KERNEL_BPF_BTF:
      return "BTF without BPF LSM (CONFIG_BPF_LSM): the kernel-hook recorder loads as kprobes, "
             "which cannot refuse a call whose record finds its ring full (counted lost; such a "
             "run does not pass)";
    case AIRLOCK_KERNEL_BPF_NO_BTF:
      return "no BTF (CONFIG_DEBUG_INFO_BTF): the kernel-hook recorder cannot load; the seccomp "
             "supervisor records alone (writes on fd > 2 and connects notified, connects "
             "emulated: slower, docs/supervisor.md)";
    }
  return "unknown";
}

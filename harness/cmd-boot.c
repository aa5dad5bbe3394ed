/* airlock boot: boot each guest, complete the evidence handshake, receive
 * heartbeats and the trailer, power off, and say how long each phase took. */
#include "config.h"

#include "harness.h"

#include <errno.h>
#include <stdio.h>

typedef struct {
  AirlockArch arch;
  gboolean started;
  gboolean complete;
  char *reason;
  char *accel;
  AirlockVmTimings t;
  guint64 heartbeats;
  char *kernel_release;
  char *chain_head;
  int second_open_errno;
} BootResult;

static void
boot_result_clear (BootResult *r)
{
  g_free (r->reason);
  g_free (r->accel);
  g_free (r->kernel_release);
  g_free (r->chain_head);
}

static double
secs (gint64 from, gint64 to)
{
  return (from && to && to >= from) ? (to - from) / 1e6 : -1;
}

static void
print_secs (double s)
{
  if (s < 0)
    printf (" %8s", "-");
  else
    printf (" %7.2fs", s);
}

static void
boot_one (AirlockArch arch, const AirlockGuestImageOptions *img_opts,
          const AirlockVmOptions *vm_opts, BootResult *r)
{
  g_autoptr (AirlockGuestImage) image = NULL;
  g_autoptr (AirlockVm) vm = NULL;
  g_autoptr (GError) error = NULL;
  const AirlockGuestHello *hello;
  AirlockChannel *ch;
  GPtrArray *swept;

  r->arch = arch;
  image = airlock_guest_image_ensure (arch, img_opts, &error);
  harness_progress_done ();
  if (!image)
    {
      r->reason = g_strdup (error->message);
      return;
    }
  vm = airlock_vm_new (arch, image, vm_opts, &error);
  if (!vm)
    {
      r->reason = g_strdup (error->message);
      return;
    }
  swept = airlock_vm_get_swept (vm);
  for (guint i = 0; i < swept->len; i++)
    fprintf (stderr, "airlock: removed domain '%s' left behind by a crashed run\n",
             (const char *) swept->pdata[i]);
  if (airlock_vm_get_accel_notice (vm))
    fprintf (stderr, "airlock: %s: %s\n", airlock_arch_to_string (arch),
             airlock_vm_get_accel_notice (vm));
  r->accel = g_strdup (airlock_vm_get_accel (vm));
  /* A kernel given with --kernel may lack what the kernel-hook recorder
   * needs: say so before the boot (the boot check itself runs no workload,
   * so its hello names no recorder). */
  {
    g_autoptr (GError) bpf_error = NULL;
    AirlockKernelBpf bpf;

    if (!airlock_guest_image_read_kernel_bpf (image, &bpf, &bpf_error))
      fprintf (stderr, "airlock: %s: %s\n", airlock_arch_to_string (arch), bpf_error->message);
    else if (bpf != AIRLOCK_KERNEL_BPF_LSM)
      fprintf (stderr, "airlock: %s: kernel %s: %s\n", airlock_arch_to_string (arch),
               image->kernel_release, airlock_kernel_bpf_describe (bpf));
  }
  fprintf (stderr, "airlock: %s: booting (%s, %s)\n", airlock_arch_to_string (arch), r->accel,
           airlock_vm_get_uri (vm));

  if (!airlock_vm_run (vm, &error))
    {
      r->reason = g_strdup (error->message);
      return;
    }
  r->started = TRUE;
  r->t = *airlock_vm_get_timings (vm);
  r->complete = airlock_vm_is_complete (vm);
  r->reason = g_strdup (airlock_vm_get_reason (vm));
  ch = airlock_vm_get_channel (vm);
  r->heartbeats = airlock_channel_get_heartbeat_count (ch);
  hello = airlock_channel_get_hello (ch);
  r->second_open_errno = hello ? (int) hello->second_open_errno : -1;
  r->kernel_release = g_strdup (hello ? hello->kernel_release : NULL);
  {
    const guint8 *head = airlock_channel_get_chain_head (ch);
    GString *hex = g_string_new (NULL);
    for (int i = 0; i < 32; i++)
      g_string_append_printf (hex, "%02x", head[i]);
    r->chain_head = g_string_free (hex, FALSE);
  }
  if (!r->complete)
    {
      /* The console tail usually says why a guest died. */
      g_autoptr (GBytes) console = airlock_vm_get_console (vm);
      gsize len;
      const char *data = g_bytes_get_data (console, &len);
      gsize from = len > 2000 ? len - 2000 : 0;

      fprintf (stderr, "airlock: %s: console tail:\n%.*s\n", airlock_arch_to_string (arch),
               (int) (len - from), data + from);
    }
}

int
cmd_boot (int argc, char **argv)
{
  g_autofree char *arch_spec = NULL;
  g_autofree char *uri = NULL;
  g_autofree char *accel_name = NULL;
  g_autofree char *cache_dir = NULL;
  g_autofree char *test_mode = NULL;
  g_autofree char *kernel = NULL;
  g_autofree char *modules = NULL;
  int run_ms = 1000;
  int boot_timeout = 60;
  gboolean arches[AIRLOCK_N_ARCHES];
  AirlockAccel accel = AIRLOCK_ACCEL_AUTO;
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = NULL;
  BootResult results[AIRLOCK_N_ARCHES] = { 0 };
  int status = HARNESS_EXIT_OK;
  GOptionEntry entries[] = {
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &arch_spec, "amd64, arm64 or all (default: all)", "ARCH" },
    { "connect", 'c', 0, G_OPTION_ARG_STRING, &uri,
      "libvirt URI (default: $AIRLOCK_CONNECT, else the embedded driver)", "URI" },
    { "accel", 0, 0, G_OPTION_ARG_STRING, &accel_name, "auto, tcg or kvm (default: auto)", "ACCEL" },
    { "run-ms", 0, 0, G_OPTION_ARG_INT, &run_ms, "how long the guest heartbeats before its trailer (default: 1000)", "MS" },
    { "boot-timeout", 0, 0, G_OPTION_ARG_INT, &boot_timeout, "seconds from start to hello (default: 60)", "S" },
    { "cache-dir", 0, 0, G_OPTION_ARG_FILENAME, &cache_dir, "cache directory (default: $AIRLOCK_CACHE_DIR or ~/.cache/airlock)", "DIR" },
    { "kernel", 0, 0, G_OPTION_ARG_FILENAME, &kernel, "boot this kernel instead of the pinned one", "PATH" },
    { "modules", 0, 0, G_OPTION_ARG_FILENAME, &modules, "modules directory (lib/modules/RELEASE) of --kernel", "DIR" },
    { "test-mode", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &test_mode, "guest misbehaviour, for tests", "MODE" },
    { NULL },
  };

  ctx = g_option_context_new ("- boot guests and check the evidence channel");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "airlock boot: %s\n", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (!harness_parse_arches (arch_spec ? arch_spec : "all", arches, &error))
    {
      fprintf (stderr, "airlock boot: %s\n", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (accel_name && !airlock_accel_from_string (accel_name, &accel))
    {
      fprintf (stderr, "airlock boot: unknown accelerator '%s' (expected auto, tcg or kvm)\n", accel_name);
      return HARNESS_EXIT_USAGE;
    }
  if (run_ms <= 0 || run_ms > 86400 * 1000 || boot_timeout <= 0 || boot_timeout > 86400
      || (!kernel != !modules))
    {
      fprintf (stderr, "airlock boot: %s\n",
               (!kernel != !modules) ? "--kernel and --modules go together"
                                     : "--run-ms must be 1 to 86400000 and --boot-timeout 1 to 86400");
      return HARNESS_EXIT_USAGE;
    }

  {
    AirlockGuestImageOptions img_opts = {
      .cache_dir = cache_dir,
      .kernel_path = kernel,
      .modules_dir = modules,
      .progress = harness_progress,
    };
    AirlockVmOptions vm_opts = {
      .uri = uri,
      .cache_dir = cache_dir,
      .accel = accel,
      .guest_run_ms = run_ms,
      .boot_timeout_ms = boot_timeout * 1000,
      .test_mode = test_mode,
    };

    for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
      if (arches[a])
        boot_one ((AirlockArch) a, &img_opts, &vm_opts, &results[a]);
  }

  printf ("%-6s %-5s %8s %8s %8s %8s %8s %8s  %s\n", "arch", "accel", "define", "start", "kernel",
          "ready", "trailer", "teardown", "result");
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      BootResult *r = &results[a];

      if (!arches[a])
        continue;
      printf ("%-6s %-5s", airlock_arch_to_string (a), r->accel ? r->accel : "-");
      print_secs (secs (r->t.begin, r->t.created));
      print_secs (secs (r->t.created, r->t.started));
      print_secs (secs (r->t.started, r->t.first_console));
      print_secs (secs (r->t.begin, r->t.hello));
      print_secs (secs (r->t.hello, r->t.trailer));
      print_secs (secs (r->t.trailer ? r->t.trailer : r->t.started, r->t.stopped));
      if (r->complete)
        printf ("  ok: %s, %" G_GUINT64_FORMAT " heartbeats, port exclusive (%s), chain %.16s\n",
                r->kernel_release, r->heartbeats,
                r->second_open_errno == EBUSY ? "EBUSY" : "?", r->chain_head);
      else
        printf ("  %s: %s\n", r->started ? "inconclusive" : "failed", r->reason ? r->reason : "unknown");
      if (!r->complete)
        status = r->started ? MAX (status, HARNESS_EXIT_INCONCLUSIVE) : HARNESS_EXIT_SETUP;
    }
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    boot_result_clear (&results[a]);
  return status;
}

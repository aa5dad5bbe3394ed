#include "config.h"

#include "vm/domain-xml-private.h"

#include "protocol.h"

const char *
airlock_domain_console_device (AirlockArch arch)
{
  return arch == AIRLOCK_ARCH_AMD64 ? "ttyS0" : "ttyAMA0";
}

static void
append_escaped (GString *out, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static void
append_escaped (GString *out, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *text = NULL;

  va_start (ap, fmt);
  text = g_markup_vprintf_escaped (fmt, ap);
  va_end (ap);
  g_string_append (out, text);
}

const char *
airlock_domain_kernel_tokens (AirlockArch arch, gboolean kvm)
{
  /* panic=-1: a guest panic reboots at once, and on_reboot=destroy turns
   * that into the domain stopping, so a panic ends the run instead of
   * hanging it.  quiet: every console byte costs an emulated UART exit
   * under TCG.  cryptomgr.notests: the crypto self-tests cost ~0.4 s of
   * an arm64 boot under TCG.
   *
   * kpti=0, arm64 under TCG only: the kernel unmaps itself at EL0 on every
   * entry and exit (KPTI) even on CPUs Meltdown does not affect, to keep
   * KASLR's secret from timing attacks on the TLB; QEMU's software MMU
   * does not tag its TLB with the ASID, so each of those switches flushes
   * it, and a system call costs ~10x more (getpid 12-24 µs instead of
   * 1.3 µs here).  TCG executes nothing speculatively and keeps EL0's
   * translations apart from EL1's, so the TLB timings KPTI hides are not
   * those of the emulated machine; what remains is docs/threat-model.md's
   * "guest kernel hardening".  Under KVM the kernel decides for the real
   * CPU, as it should.
   *
   * Not noapictimer on amd64, though the APIC timer's calibration costs an
   * icount boot ~1 s: the HPET's tick then wakes an idle guest every 21 s
   * of guest time instead of 34, and the warped clock reached the six
   * hours' limit in 28 s instead of 22 (README, "Measured and left
   * alone").
   *
   * Under TCG, where the warped clock runs, fewer wakeups of an idle
   * guest: the warp skips idle time from one timer to the next, and each
   * wakeup costs wall time, so the kernel's own periodic timers set how fast
   * six hours of a sleeping workload pass.  An idle guest woke ~4.7 times a
   * second of its time on amd64 (~2.9 on arm64), measured from
   * /proc/timer_list's idle_calls across an hour's sleep:
   * sysctl.vm.compaction_proactiveness=0 stops kcompactd's check every
   * 500 ms (nothing to compact in a guest that lives for seconds);
   * nowatchdog the soft-lockup detector's 4 s timer (a run's hang is the
   * host's to see: heartbeats and the time limits); tsc=reliable, amd64, the
   * clocksource watchdog's comparison of the TSC with the HPET every
   * 500 ms (both are QEMU's, derived from one virtual clock).  Together:
   * 17090 → 3612 wakeups an hour on amd64 and 10427 → 1940 on arm64, and an
   * hour's sleep 4.5 → 1.0 s of wall time on amd64, 4.9 → 1.1 s on arm64.
   * Each alone did little (compaction alone 4.3 s, tsc=reliable alone
   * 4.9 s on amd64).  Under KVM the kernel keeps its defaults. */
  if (kvm)
    return "panic=-1 quiet cryptomgr.notests";
  if (arch == AIRLOCK_ARCH_ARM64)
    return "panic=-1 quiet cryptomgr.notests kpti=0 nowatchdog sysctl.vm.compaction_proactiveness=0";
  return "panic=-1 quiet cryptomgr.notests tsc=reliable nowatchdog "
         "sysctl.vm.compaction_proactiveness=0";
}

char *
airlock_domain_xml_build (const AirlockDomainSpec *spec)
{
  GString *x = g_string_new (NULL);
  gboolean amd64 = spec->arch == AIRLOCK_ARCH_AMD64;
  g_autofree char *cmdline = NULL;

  g_return_val_if_fail (spec->name && spec->uuid && spec->kernel && spec->initrd, NULL);

  cmdline = g_strdup_printf ("console=%s %s%s%s", airlock_domain_console_device (spec->arch),
                             airlock_domain_kernel_tokens (spec->arch,
                                                           g_str_equal (spec->virt_type, "kvm")),
                             spec->cmdline ? " " : "", spec->cmdline ? spec->cmdline : "");

  append_escaped (x, "<domain type='%s' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>\n",
                  spec->virt_type);
  append_escaped (x, "  <name>%s</name>\n  <uuid>%s</uuid>\n", spec->name, spec->uuid);
  append_escaped (x, "  <title>airlock guest (%s)</title>\n", airlock_arch_to_string (spec->arch));
  g_string_append (x, "  <metadata>\n");
  append_escaped (x, "    <airlock:run xmlns:airlock='%s'>\n", AIRLOCK_METADATA_NS);
  append_escaped (x, "      <airlock:owner boot-id='%s' host='%s' pid='%" G_GINT64_FORMAT
                  "' start-time='%" G_GINT64_FORMAT "'/>\n",
                  spec->owner_boot_id ? spec->owner_boot_id : "",
                  spec->owner_host ? spec->owner_host : "",
                  spec->owner_pid, spec->owner_start_time);
  if (spec->run_dir)
    append_escaped (x, "      <airlock:run-dir path='%s'/>\n", spec->run_dir);
  if (spec->socket_dir)
    append_escaped (x, "      <airlock:run-dir path='%s'/>\n", spec->socket_dir);
  g_string_append (x, "    </airlock:run>\n  </metadata>\n");
  append_escaped (x, "  <memory unit='MiB'>%u</memory>\n  <vcpu>%u</vcpu>\n",
                  spec->memory_mib, spec->vcpus);
  g_string_append (x, "  <os>\n");
  append_escaped (x, "    <type arch='%s' machine='%s'>hvm</type>\n",
                  airlock_arch_to_uname (spec->arch), amd64 ? "q35" : "virt");
  append_escaped (x, "    <kernel>%s</kernel>\n    <initrd>%s</initrd>\n", spec->kernel, spec->initrd);
  append_escaped (x, "    <cmdline>%s</cmdline>\n", cmdline);
  g_string_append (x, "  </os>\n");
  if (amd64)
    {
      /* Images built for x86-64-v2/v3 crash on qemu64: give the guest every
       * feature the accelerator can. */
      g_string_append (x, "  <features><acpi/></features>\n");
      if (g_str_equal (spec->virt_type, "kvm"))
        g_string_append (x, "  <cpu mode='host-passthrough'/>\n");
      else
        /* All but ERMS ("enhanced rep movsb/stosb"), which tells software
         * that a byte-wise rep movsb or stosb is the fastest copy.  Under
         * TCG each of its iterations is one pass through a translation
         * block: the kernel's clear_page, memset and memcpy (and glibc's
         * large copies) chose it and a boot spent its time zeroing pages
         * a byte at a time.  QEMU's start to /init under icount 5.3-6.5 s
         * with it, 4.5-5.3 s without (3 boots each, alternating).  Not
         * part of any x86-64 level (v2, v3, v4): no image needs it. */
        g_string_append (x, "  <cpu mode='maximum'><feature policy='disable' name='erms'/></cpu>\n");
    }
  else if (g_str_equal (spec->virt_type, "kvm"))
    g_string_append (x, "  <cpu mode='host-passthrough'/>\n");
  else if (!spec->arm64_cpu_max)
    /* Under TCG, -cpu max on QEMU < 10 spends most of its time emulating
     * pointer authentication; cortex-a57 boots ~4x faster (DESIGN.md). */
    g_string_append (x, "  <cpu mode='custom' match='exact'><model fallback='forbid'>cortex-a57</model></cpu>\n");
  else
    g_string_append (x, "  <features><gic version='3'/></features>\n");
  if (spec->icount && !g_str_equal (spec->virt_type, "kvm"))
    /* The RTC (mc146818, pl031) counts the host's time by default, and
     * anything in the guest can read it (/sys/class/rtc/rtc0/since_epoch):
     * under the warped clock it would show a workload the hour it slept
     * pass in a second, and give a time bomb a clock to wait on that does
     * not warp.  track='guest' (-rtc clock=vm) makes it count the guest's
     * time like every other clock there. */
    g_string_append (x, "  <clock offset='utc'><timer name='rtc' track='guest'/></clock>\n");
  else
    g_string_append (x, "  <clock offset='utc'/>\n");
  g_string_append (x,
    "  <on_poweroff>destroy</on_poweroff>\n"
    "  <on_reboot>destroy</on_reboot>\n"
    "  <on_crash>destroy</on_crash>\n"
    "  <devices>\n");
  /* Without an explicit emulator libvirt picks its own for the arch, which is
   * what a remote or system hypervisor wants. */
  if (spec->emulator)
    append_escaped (x, "    <emulator>%s</emulator>\n", spec->emulator);
  /* Through a daemon (local or remote), console and channels are read
   * through libvirt streams (virDomainOpenConsole needs a pty,
   * virDomainOpenChannel a unix channel), and socket paths are left to
   * libvirt: it knows where its QEMU user may write. */
  if (spec->socket_dir)
    /* Local QEMU: the console is a unix socket we connect to ourselves.
     * libvirt's console streams lock a pty and can deadlock against the
     * domain's teardown when the guest stops on its own. */
    append_escaped (x,
      "    <serial type='unix'><source mode='bind' path='%s/console.sock'/><target port='0'/></serial>\n"
      "    <console type='unix'><source mode='bind' path='%s/console.sock'/><target type='serial' port='0'/></console>\n",
      spec->socket_dir, spec->socket_dir);
  else
    g_string_append (x,
      "    <serial type='pty'><target port='0'/></serial>\n"
      "    <console type='pty'><target type='serial' port='0'/></console>\n");
  /* The virtio devices sit on the root bus, as the NIC does below, at fixed
   * slots clear of those libvirt assigns (from 0x1 up).  Left to libvirt,
   * each would get a PCIe root port of its own, a bridge more for the
   * guest kernel to enumerate and set up before its init runs. */
  g_string_append (x, "    <controller type='virtio-serial' index='0'>"
                      "<address type='pci' domain='0x0000' bus='0x00' slot='0x11' function='0x0'/>"
                      "</controller>\n");
  if (spec->socket_dir)
    append_escaped (x,
      "    <channel type='unix'><source mode='bind' path='%s/evidence.sock'/><target type='virtio' name='%s'/></channel>\n",
      spec->socket_dir, AIRLOCK_PORT_EVIDENCE);
  else
    append_escaped (x,
      "    <channel type='unix'><source mode='bind'/><target type='virtio' name='%s'/></channel>\n",
      AIRLOCK_PORT_EVIDENCE);
  if (spec->stdio && spec->socket_dir)
    append_escaped (x,
      "    <channel type='unix'><source mode='bind' path='%s/stdio.sock'/><target type='virtio' name='%s'/></channel>\n",
      spec->socket_dir, AIRLOCK_PORT_STDIO);
  else if (spec->stdio)
    append_escaped (x,
      "    <channel type='unix'><source mode='bind'/><target type='virtio' name='%s'/></channel>\n",
      AIRLOCK_PORT_STDIO);
  if (spec->net_port)
    append_escaped (x,
      "    <channel type='unix'><source mode='bind'/><target type='virtio' name='%s'/></channel>\n",
      AIRLOCK_PORT_NET);
  if (spec->root_disk)
    /* Read-only: runs share the cached disk; the guest puts a tmpfs overlay
     * on top.  No cache: the host page cache already holds it. */
    append_escaped (x,
      "    <disk type='file' device='disk'><driver name='qemu' type='raw'/>"
      "<source file='%s'/><target dev='vda' bus='virtio'/><readonly/><serial>%s</serial>"
      "<address type='pci' domain='0x0000' bus='0x00' slot='0x12' function='0x0'/></disk>\n",
      spec->root_disk, spec->root_disk_serial);
  g_string_append (x,
    "    <controller type='usb' model='none'/>\n"
    "    <memballoon model='none'/>\n"
    "  </devices>\n");
  {
    gboolean cpu_arg = !amd64 && spec->arm64_cpu_max && !g_str_equal (spec->virt_type, "kvm");
    gboolean icount = spec->icount && !g_str_equal (spec->virt_type, "kvm");

    if (amd64 && spec->short_cpu_check && !g_str_equal (spec->virt_type, "kvm"))
      /* Before resuming, libvirt reads back the x86 guest CPU it started.
       * With QEMU's cpu-unavailable-features it does so one qom-get per CPU
       * property, ~400 monitor round trips (160 ms of a 280 ms start here);
       * without it, the older way: two (feature-words, filtered-features).
       * Same -cpu, same guest CPU; libvirt marks the domain tainted
       * (custom-hypervisor-feature) in its log. */
      g_string_append (x,
        "  <qemu:capabilities>\n"
        "    <qemu:del capability='cpu-unavailable-features'/>\n"
        "  </qemu:capabilities>\n");
    if (cpu_arg || spec->net_socket || icount)
      g_string_append (x, "  <qemu:commandline>\n");
    if (icount)
      /* The guest's clock driven by its instructions, not the host's
       * (libvirt does not model it).  sleep=off: while every vCPU is idle
       * QEMU moves the clock to the next timer at once, so a workload's
       * hour of sleep passes in a second or two (the warped clock).
       * shift=2: 4 virtual ns an instruction, a 250 MIPS CPU, about what
       * TCG makes of kernel code; an amd64 boot spins on its clock in
       * places, and at shift=0 (1 ns) every spin cost 4-5 times its wall
       * time: boot-to-ready 5.1-5.4 s against 2.8-3.3 s here and 1.4-1.7 s
       * without icount (shift=3: 2.5-2.6 s, for a guest that sees its CPU
       * at half this speed).  shift=auto warps too, but its adjustment
       * keeps a timer every 100 ms of guest time, which caps each jump:
       * an hour's sleep took 8.2 s instead of 2.9 s at shift=0. */
      g_string_append (x,
        "    <qemu:arg value='-icount'/>\n"
        "    <qemu:arg value='shift=2,sleep=off'/>\n");
    if (cpu_arg)
      /* libvirt does not model pauth-impdef: pass the CPU on QEMU's command line. */
      g_string_append (x,
        "    <qemu:arg value='-cpu'/>\n"
        "    <qemu:arg value='max,pauth-impdef=on'/>\n");
    if (spec->net_socket)
      {
        /* libvirt 9.0 models no stream netdev: the NIC is QEMU's own
         * arguments.  Its far end is airlock's sinkhole process, which
         * captures every frame in both directions on the host, where the
         * guest cannot touch it, and answers them in a network namespace
         * that reaches nothing else (docs/sinkhole.md).  The NIC sits at a
         * fixed slot of the root bus, clear of the slots libvirt assigns
         * to its own devices (from 0x1 up).  QEMU's option parser splits
         * at commas: a path holding one must double it. */
        GString *p = g_string_new (NULL);
        g_autofree char *escaped = NULL;

        for (const char *c = spec->net_socket; *c; c++)
          {
            if (*c == ',')
              g_string_append_c (p, ',');
            g_string_append_c (p, *c);
          }
        escaped = g_string_free (p, FALSE);
        g_string_append (x, "    <qemu:arg value='-netdev'/>\n");
        append_escaped (x, "    <qemu:arg value='stream,id=airlock-net,server=off,"
                        "addr.type=unix,addr.path=%s'/>\n", escaped);
        g_string_append (x,
          "    <qemu:arg value='-device'/>\n"
          "    <qemu:arg value='virtio-net-pci,netdev=airlock-net,bus=pcie.0,addr=0x10,mac=" AIRLOCK_NET_GUEST_MAC "'/>\n");
      }
    if (cpu_arg || spec->net_socket || icount)
      g_string_append (x, "  </qemu:commandline>\n");
  }
  g_string_append (x, "</domain>\n");
  return g_string_free (x, FALSE);
}

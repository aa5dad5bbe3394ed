/* Writes the seed corpus of fuzz-verdict (tests/fuzz/corpus/verdict/):
 * runs in fuzz-verdict.h's format, made of real EVENT frames (guest/wire.h,
 * as the supervisor encodes them) and a real capture (the unit tests' frame
 * builder, tests/unit/capture-frames.h), one per kind of run the verdict
 * tells apart: a clean pass, a setup that failed, an entrypoint that does
 * not exist, a run ended by its time limit, a control missing from the
 * capture, egress the policy admits and egress it does not, a flow no
 * record explains, an incomplete channel; on the sinkhole network, a
 * connection admitted by its host name and one that asked its address
 * for another name, with a connection no record explains.
 *
 *   gen-verdict-corpus DIR           write the seeds into DIR
 *   gen-verdict-corpus --check DIR   exit 1 unless DIR holds exactly them
 *
 * The seeds are committed; the "fuzz" test suite runs --check so they
 * cannot drift from this program. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "net/guest-net.h"
#include "probe-controls.h"
#include "protocol.h"
#include "wire.h"

#include "capture-frames.h"
#include "fuzz-verdict.h"
#include "corpus-seed.h"

#define ARCH_X86_64 0xc000003eu
#define NR_CONNECT 42
#define NR_SENDTO 44
#define NO_RESULT G_MININT64

typedef struct {
  GByteArray *parts;
  GByteArray *pcap;
  guint32 pcap_sec;
  guint64 seq;
  guint8 flags;
  guint32 end_reason;
  guint32 timeout_ms;
  guint32 exit_status;
} Run;

static void
part (Run *r, guint8 kind, const void *bytes, gsize len)
{
  guint8 h[5] = { kind, len & 0xff, (len >> 8) & 0xff, (len >> 16) & 0xff, len >> 24 };

  g_byte_array_append (r->parts, h, 5);
  g_byte_array_append (r->parts, bytes, (guint) len);
}

static void
add_frame (Run *r, struct wire_frame *f)
{
  size_t n = wire_end (f);

  g_assert (n > 0);
  part (r, FUZZ_VERDICT_PART_EVENT, f->bytes + AIRLOCK_FRAME_HEADER_SIZE,
        n - AIRLOCK_FRAME_HEADER_SIZE);
  r->seq++;
}

static void
ev_begin (Run *r, struct wire_frame *f, guint32 kind, guint32 phase)
{
  wire_begin (f, AIRLOCK_FRAME_EVENT, r->seq);
  wire_put_u32 (f, AIRLOCK_TLV_EV_KIND, kind);
  wire_put_u64 (f, AIRLOCK_TLV_EV_TIME_NS, 1000 + r->seq);
  if (phase)
    wire_put_u32 (f, AIRLOCK_TLV_EV_PHASE, phase);
}

static void
run_start (Run *r, guint32 phase)
{
  struct wire_frame f;

  ev_begin (r, &f, AIRLOCK_EVENT_WORKLOAD_START, phase);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_PID, 90);
  add_frame (r, &f);
}

static void
run_exec (Run *r, guint32 phase, gint64 result, const char *path, const char *note)
{
  struct wire_frame f;

  ev_begin (r, &f, AIRLOCK_EVENT_WORKLOAD_EXEC, phase);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_NSPID, 2);
  wire_put_str (&f, AIRLOCK_TLV_EV_PATH, path);
  if (result != NO_RESULT)
    wire_put_u64 (&f, AIRLOCK_TLV_EV_RESULT, (guint64) result);
  if (note)
    wire_put_str (&f, AIRLOCK_TLV_EV_NOTE, note);
  add_frame (r, &f);
}

static void
run_exit (Run *r, guint32 phase, guint32 status)
{
  struct wire_frame f;

  ev_begin (r, &f, AIRLOCK_EVENT_WORKLOAD_EXIT, phase);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_EXIT_STATUS, status);
  add_frame (r, &f);
}

static void
guest_mac (guint8 mac[6])
{
  guint v[6];

  sscanf (AIRLOCK_NET_GUEST_MAC, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]);
  for (int i = 0; i < 6; i++)
    mac[i] = (guint8) v[i];
}

/* A connect (TCP) or sendto (UDP) to @ip:@port: its record when
 * @recorded (a syscall record names no phase: it belongs to the one
 * started last), its SYN or datagram in the capture when @on_wire. */
static void
run_attempt (Run *r, int family, int protocol, const char *ip, guint16 port,
             gboolean recorded, gboolean on_wire)
{
  gboolean tcp = protocol == IPPROTO_TCP;
  guint8 sa[28] = { 0 };
  gsize salen;
  guint8 sock[12], mac[6];
  GByteArray *l4, *l3;

  if (family == AF_INET)
    {
      struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons (port) };

      inet_pton (AF_INET, ip, &sin.sin_addr);
      memcpy (sa, &sin, sizeof sin);
      salen = sizeof sin;
    }
  else
    {
      struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons (port) };

      inet_pton (AF_INET6, ip, &sin6.sin6_addr);
      memcpy (sa, &sin6, sizeof sin6);
      salen = sizeof sin6;
    }
  if (recorded)
    {
      struct wire_frame f;
      guint8 args[48] = { 0 };

      ev_begin (r, &f, AIRLOCK_EVENT_SYSCALL, 0);
      wire_put_u32 (&f, AIRLOCK_TLV_EV_ACTION, AIRLOCK_ACTION_CONTINUE);
      wire_put_u32 (&f, AIRLOCK_TLV_EV_SYSCALL, tcp ? NR_CONNECT : NR_SENDTO);
      wire_put_u32 (&f, AIRLOCK_TLV_EV_AUDIT_ARCH, ARCH_X86_64);
      wire_put (&f, AIRLOCK_TLV_EV_ARGS, args, sizeof args);
      wire_put_u32 (&f, AIRLOCK_TLV_EV_PID, 200);
      wire_put_u32 (&f, AIRLOCK_TLV_EV_TID, 200);
      wire_put_str (&f, AIRLOCK_TLV_EV_EXE, "/usr/bin/app");
      wire_le32 (sock, (guint32) family);
      wire_le32 (sock + 4, tcp ? SOCK_STREAM : SOCK_DGRAM);
      wire_le32 (sock + 8, 0);
      wire_put (&f, AIRLOCK_TLV_EV_SOCKET, sock, sizeof sock);
      wire_put_u32 (&f, AIRLOCK_TLV_EV_FD, 3);
      wire_put (&f, AIRLOCK_TLV_EV_ADDR, sa, salen);
      wire_put_u32 (&f, AIRLOCK_TLV_EV_ADDRLEN, (guint32) salen);
      add_frame (r, &f);
    }
  if (!on_wire)
    return;
  l4 = tcp ? cf_tcp (40000, port, 1, 0x02 /* SYN */, NULL, 0) : cf_udp (40000, port, "x", 1);
  l3 = family == AF_INET ? cf_ipv4 ("10.0.2.15", ip, (guint8) protocol, l4)
                         : cf_ipv6 ("fec0::15", ip, (guint8) protocol, l4);
  guest_mac (mac);
  cf_pcap_add (r->pcap, ++r->pcap_sec,
               cf_ethernet (capture_gateway_mac, mac, family == AF_INET ? 0x0800 : 0x86dd, l3));
}

static void
run_controls (Run *r, int skip_wire)
{
  run_start (r, AIRLOCK_PHASE_CONTROLS);
  run_exec (r, AIRLOCK_PHASE_CONTROLS, 0, "/bin/probe", NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (probe_controls); i++)
    run_attempt (r, probe_controls[i].family,
                 probe_controls[i].protocol, probe_controls[i].address, probe_controls[i].port,
                 TRUE, (int) i != skip_wire);
  run_exit (r, AIRLOCK_PHASE_CONTROLS, 0);
}

static void
run_workload (Run *r)
{
  run_start (r, AIRLOCK_PHASE_WORKLOAD);
  run_exec (r, AIRLOCK_PHASE_WORKLOAD, 0, "/usr/bin/app", NULL);
}

static void
seed_clean (Run *r)
{
  run_controls (r, -1);
  run_workload (r);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

static void
seed_setup_failed (Run *r)
{
  static const char why[] = "the workload's setup failed: user 'app': cannot read the image's "
                            "/etc/passwd: it is over 256 KiB";

  run_controls (r, -1);
  part (r, FUZZ_VERDICT_PART_LOG, why, strlen (why));
  r->end_reason = AIRLOCK_END_ERROR;
}

static void
seed_exec_enoent (Run *r)
{
  run_controls (r, -1);
  run_start (r, AIRLOCK_PHASE_WORKLOAD);
  run_exec (r, AIRLOCK_PHASE_WORKLOAD, -ENOENT, "/usr/bin/env",
            "cannot execute '/usr/bin/env': No such file or directory");
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 127 << 8);
}

static void
seed_exec_unseen (Run *r)
{
  run_controls (r, -1);
  run_start (r, AIRLOCK_PHASE_WORKLOAD);
  run_exec (r, AIRLOCK_PHASE_WORKLOAD, NO_RESULT, "/usr/bin/app", "the report was lost");
}

static void
seed_timeout (Run *r)
{
  run_controls (r, -1);
  run_workload (r);
  r->end_reason = AIRLOCK_END_TIMEOUT;
}

static void
seed_control_missing (Run *r)
{
  run_controls (r, 0);
  run_workload (r);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

static void
seed_egress_admitted (Run *r)
{
  static const char policy[] = "allow tcp 192.0.2.0/24 port 443\nallow udp any port 53\n";

  run_controls (r, -1);
  run_workload (r);
  run_attempt (r, AF_INET, IPPROTO_TCP, "192.0.2.10", 443, TRUE, TRUE);
  run_attempt (r, AF_INET6, IPPROTO_UDP, "2001:db8::53", 53, TRUE, TRUE);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
  part (r, FUZZ_VERDICT_PART_POLICY, policy, strlen (policy));
}

static void
seed_egress_refused (Run *r)
{
  run_controls (r, -1);
  run_workload (r);
  run_attempt (r, AF_INET, IPPROTO_TCP, "198.51.100.1", 80, TRUE, TRUE);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

static void
seed_unrecorded_flow (Run *r)
{
  run_controls (r, -1);
  run_workload (r);
  run_attempt (r, AF_INET, IPPROTO_UDP, "203.0.113.9", 9999, FALSE, TRUE);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

static void
seed_incomplete (Run *r)
{
  run_controls (r, -1);
  run_workload (r);
  r->flags &= (guint8) ~(FUZZ_VERDICT_COMPLETE | FUZZ_VERDICT_TRAILER);
}

/* The sinkhole's record file for the two seeds below, in the format
 * lib/sinkhole/records.c writes (one JSON object per line, the final
 * {"end":…}). */
#define SINK_DNS(name, address) \
  "{\"kind\":\"dns\",\"time_us\":1000,\"end_us\":1000,\"family\":\"inet\"," \
  "\"address\":\"10.0.2.3\",\"port\":53,\"client_port\":40001,\"transport\":\"udp\"," \
  "\"question\":\"" name "\",\"qtype\":1,\"rcode\":0,\"answers\":[\"" address "\"]}\n"
#define SINK_TLS(address, name, sni) \
  "{\"kind\":\"tcp\",\"time_us\":2000,\"end_us\":3000,\"family\":\"inet\"," \
  "\"address\":\"" address "\",\"port\":443,\"client_port\":40000,\"name\":\"" name "\"," \
  "\"protocol\":\"tls\",\"tls\":{\"sni\":\"" sni "\",\"alpn\":[\"h2\"],\"version\":\"1.3\"}," \
  "\"client_bytes\":\"\",\"server_bytes\":\"\",\"bytes_in\":517,\"bytes_out\":0," \
  "\"response\":\"closed\"}\n"
#define SINK_END "{\"end\":true,\"records_dropped\":0}\n"

static void
seed_sinkhole_host (Run *r)
{
  static const char policy[] = "allow udp any port 53\nallow tcp any port 443 host=pypi.org\n";
  static const char records[] = SINK_DNS ("pypi.org.", "198.18.3.7")
                                SINK_TLS ("198.18.3.7", "pypi.org.", "pypi.org") SINK_END;

  run_controls (r, -1);
  run_workload (r);
  run_attempt (r, AF_INET, IPPROTO_UDP, "10.0.2.3", 53, TRUE, TRUE);
  run_attempt (r, AF_INET, IPPROTO_TCP, "198.18.3.7", 443, TRUE, TRUE);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
  part (r, FUZZ_VERDICT_PART_POLICY, policy, strlen (policy));
  part (r, FUZZ_VERDICT_PART_SINKHOLE, records, strlen (records));
}

static void
seed_sinkhole_fronted (Run *r)
{
  static const char policy[] = "allow udp any port 53\nallow tcp any port 443 host=allowed.org\n";
  static const char records[] = SINK_DNS ("allowed.org.", "198.18.7.7")
                                SINK_TLS ("198.18.7.7", "allowed.org.", "evil.org")
                                SINK_TLS ("198.18.9.9", "other.org.", "other.org") SINK_END;

  run_controls (r, -1);
  run_workload (r);
  run_attempt (r, AF_INET, IPPROTO_UDP, "10.0.2.3", 53, TRUE, TRUE);
  run_attempt (r, AF_INET, IPPROTO_TCP, "198.18.7.7", 443, TRUE, TRUE);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
  part (r, FUZZ_VERDICT_PART_POLICY, policy, strlen (policy));
  part (r, FUZZ_VERDICT_PART_SINKHOLE, records, strlen (records));
}

static const struct {
  const char *name;
  void (*build) (Run *r);
} seeds[] = {
  { "clean", seed_clean },
  { "setup-failed", seed_setup_failed },
  { "exec-enoent", seed_exec_enoent },
  { "exec-unseen", seed_exec_unseen },
  { "timeout", seed_timeout },
  { "control-missing", seed_control_missing },
  { "egress-admitted", seed_egress_admitted },
  { "egress-refused", seed_egress_refused },
  { "unrecorded-flow", seed_unrecorded_flow },
  { "incomplete", seed_incomplete },
  { "sinkhole-host", seed_sinkhole_host },
  { "sinkhole-fronted", seed_sinkhole_fronted },
};

static GByteArray *
build (gsize i, const char **ret_name)
{
  Run r = { 0 };
  GByteArray *out = g_byte_array_new ();
  guint8 header[FUZZ_VERDICT_HEADER] = { 0 };

  r.parts = g_byte_array_new ();
  r.pcap = cf_pcap_new ();
  r.seq = 1;
  r.flags = FUZZ_VERDICT_COMPLETE | FUZZ_VERDICT_TRAILER;
  r.end_reason = AIRLOCK_END_COMPLETED;
  r.timeout_ms = 30000;
  seeds[i].build (&r);
  part (&r, FUZZ_VERDICT_PART_PCAP, r.pcap->data, r.pcap->len);

  header[0] = r.flags;
  wire_le32 (header + 4, r.end_reason);
  wire_le32 (header + 8, r.timeout_ms);
  wire_le32 (header + 12, r.exit_status);
  g_byte_array_append (out, header, sizeof header);
  g_byte_array_append (out, r.parts->data, r.parts->len);
  g_byte_array_unref (r.parts);
  g_byte_array_unref (r.pcap);
  *ret_name = seeds[i].name;
  return out;
}

static const CorpusSet verdict = { .n_seeds = G_N_ELEMENTS (seeds), .seed_build = build };

int
main (int argc, char **argv)
{
  return corpus_seed_main (argc, argv, &verdict, 1);
}

/* Writes the seed corpus of fuzz-sinkhole (tests/fuzz/corpus/sinkhole/):
 * first bytes of each protocol the detection tells apart, DNS messages for
 * each way the answerer replies, and record files written by the
 * library's own writer (the harness reads every input all three ways).
 *
 *   gen-sinkhole-corpus DIR           write the seeds into DIR
 *   gen-sinkhole-corpus --check DIR   exit 1 unless DIR holds exactly them
 *
 * The seeds are committed; the "fuzz" test suite runs --check so they
 * cannot drift from this program, nor the record files from the writer. */
#include "config.h"

#include "sinkhole/sinkhole.h"
#include "corpus-seed.h"
#include "sinkhole-bytes.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* example.com */
static const guint8 example[] = "\x07" "example" "\x03" "com";

static void
dns_header (GByteArray *s, guint16 id, guint16 flags, guint16 qd, guint16 ar)
{
  sb_be16 (s, id);
  sb_be16 (s, flags);
  sb_be16 (s, qd);
  sb_be16 (s, 0);
  sb_be16 (s, 0);
  sb_be16 (s, ar);
}

static void
dns_question (GByteArray *s, const guint8 *name, gsize len, guint16 qtype)
{
  sb_raw (s, name, len);
  sb_u8 (s, 0);
  sb_be16 (s, qtype);
  sb_be16 (s, 1);
}

static void
seed_http_curl (GByteArray *s)
{
  sb_text (s, "GET /simple/requests/ HTTP/1.1\r\nHost: pypi.org\r\n"
              "User-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n");
}

static void
seed_http_partial (GByteArray *s)
{
  sb_text (s, "POST /upload HTTP/1.0\r\nhost: a.example\r\nUser-Agent: Wget");
}

static const char *const alpn_h2[] = { "h2", "http/1.1", NULL };
static const guint16 versions_13[] = { 0x3a3a, 0x0304, 0x0303 };

static void
take (GByteArray *s, GByteArray *bytes)
{
  sb_raw (s, bytes->data, bytes->len);
  g_byte_array_unref (bytes);
}

static void
seed_tls13 (GByteArray *s)
{
  take (s, sb_in_records (sb_client_hello ("example.com", alpn_h2, versions_13, 3), 16384));
}

static void
seed_tls13_split (GByteArray *s)
{
  take (s, sb_in_records (sb_client_hello ("example.com", alpn_h2, versions_13, 3), 50));
}

static void
seed_tls12 (GByteArray *s)
{
  take (s, sb_in_records (sb_client_hello ("legacy.example", NULL, NULL, 0), 16384));
}

static void
seed_ssh (GByteArray *s)
{
  sb_text (s, "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n");
  sb_raw (s, "\0\0\x05\xdc\x04\x14", 6);
}

static void
seed_dns_tcp (GByteArray *s)
{
  static const guint8 pypi[] = "\x04" "pypi" "\x03" "org";

  sb_be16 (s, 29);
  dns_header (s, 0x1111, 0x0100, 1, 0);
  dns_question (s, example, sizeof example - 1, 1);
  sb_be16 (s, 26);
  dns_header (s, 0x2222, 0x0100, 1, 0);
  dns_question (s, pypi, sizeof pypi - 1, 28);
}

static void
seed_dns_a (GByteArray *s)
{
  dns_header (s, 0x1234, 0x0100, 1, 0);
  dns_question (s, example, sizeof example - 1, 1);
}

static void
seed_dns_aaaa_mixed_case (GByteArray *s)
{
  static const guint8 mixed[] = "\x07" "ExAmPlE" "\x03" "CoM";

  dns_header (s, 0xbeef, 0x0100, 1, 0);
  dns_question (s, mixed, sizeof mixed - 1, 28);
}

static void
seed_dns_edns (GByteArray *s)
{
  dns_header (s, 0x000c, 0x0120, 1, 1);
  dns_question (s, example, sizeof example - 1, 1);
  sb_raw (s, "\x00\x00\x29\x10\x00\x00\x00\x00\x00\x00\x00", 11);
}

static void
seed_dns_two_questions (GByteArray *s)
{
  dns_header (s, 0x000a, 0x0100, 2, 0);
  dns_question (s, example, sizeof example - 1, 1);
  sb_raw (s, "\xc0\x0c\x00\x1c\x00\x01", 6);
}

static void
seed_dns_response (GByteArray *s)
{
  dns_header (s, 0x0007, 0x8180, 1, 0);
  dns_question (s, example, sizeof example - 1, 1);
}

static void
seed_dns_opcode_status (GByteArray *s)
{
  dns_header (s, 0x0006, 0x1100, 1, 0);
  dns_question (s, example, sizeof example - 1, 1);
}

static void
seed_dns_mx (GByteArray *s)
{
  dns_header (s, 0x0001, 0x0100, 1, 0);
  dns_question (s, example, sizeof example - 1, 15);
}

static void
seed_raw (GByteArray *s)
{
  sb_raw (s, "\x00\x01\x02\x03\xff", 5);
}

static void
add_line (GByteArray *s, AirlockSinkholeRecord *r)
{
  g_autofree char *line = airlock_sinkhole_record_to_json (r);

  sb_text (s, line);
  sb_u8 (s, '\n');
  airlock_sinkhole_record_free (r);
}

/* One record of each kind and protocol; @end: with the final line. */
static void
records (GByteArray *s, gboolean end)
{
  AirlockSinkholeRecord *r;

  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_DNS, 1000, AF_INET, "10.0.2.3", 53, 40000);
  r->dns_transport = g_strdup ("udp");
  r->dns.question = g_strdup ("example.com.");
  r->dns.qtype = 1;
  g_ptr_array_add (r->dns.answers, g_strdup ("198.18.243.18"));
  add_line (s, r);

  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_TCP, 2000, AF_INET, "198.18.243.18", 80, 40010);
  r->end_us = 2500;
  r->name = g_strdup ("example.com.");
  r->detected.protocol = AIRLOCK_SINKHOLE_PROTOCOL_HTTP;
  r->detected.http_method = g_strdup ("GET");
  r->detected.http_path = g_strdup ("/");
  r->detected.http_version = g_strdup ("HTTP/1.1");
  r->detected.http_host = g_strdup ("example.com");
  r->detected.http_user_agent = g_strdup ("curl/7.88.1");
  g_bytes_unref (r->client_bytes);
  r->client_bytes = g_bytes_new_static ("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", 37);
  r->bytes_in = 37;
  r->response = g_strdup ("closed");
  add_line (s, r);

  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_TCP, 3000, AF_INET6, "2001:db8:a1:0:5bb0:10db:71e2:3cfd",
                  443, 40011);
  r->detected.protocol = AIRLOCK_SINKHOLE_PROTOCOL_TLS;
  r->detected.tls_sni = g_strdup ("example.com");
  r->detected.tls_alpn = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (r->detected.tls_alpn, g_strdup ("h2"));
  r->detected.tls_version = g_strdup ("1.3");
  r->bytes_in = 517;
  r->response = g_strdup ("fixture example.com:443");
  add_line (s, r);

  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_TCP, 3200, AF_INET, "203.0.113.9", 22, 40013);
  r->detected.protocol = AIRLOCK_SINKHOLE_PROTOCOL_SSH;
  r->detected.ssh_banner = g_strdup ("SSH-2.0-OpenSSH_9.2p1 Debian-2");
  g_bytes_unref (r->server_bytes);
  r->server_bytes = g_bytes_new_static ("SSH-2.0-x\r\n", 11);
  r->bytes_out = 11;
  add_line (s, r);

  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_TCP, 3300, AF_INET, "10.0.2.3", 53, 40014);
  r->detected.protocol = AIRLOCK_SINKHOLE_PROTOCOL_DNS;
  r->detected.dns_questions = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (r->detected.dns_questions, g_strdup ("pypi.org."));
  add_line (s, r);

  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_UDP, 4000, AF_INET, "198.51.100.9", 123, 40020);
  g_bytes_unref (r->client_bytes);
  r->client_bytes = g_bytes_new_static ("\x23\x00\x00\x00", 4);
  r->bytes_in = 48;
  add_line (s, r);

  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_ICMP, 5000, AF_INET6, "2001:db8::1", 0, 0);
  add_line (s, r);

  if (end)
    {
      g_autofree char *line = airlock_sinkhole_end_line_to_json (2, 1, "frame 3 from the guest has source MAC 52:55:0a:00:02:02, not its NIC's");

      sb_text (s, line);
      sb_u8 (s, '\n');
    }
}

static void
seed_records (GByteArray *s)
{
  records (s, TRUE);
}

static void
seed_records_incomplete (GByteArray *s)
{
  records (s, FALSE);
}

static const CorpusSeed seeds[] = {
  { "http-curl", seed_http_curl },
  { "http-partial", seed_http_partial },
  { "tls13-hello", seed_tls13 },
  { "tls13-hello-split", seed_tls13_split },
  { "tls12-hello", seed_tls12 },
  { "ssh-banner", seed_ssh },
  { "dns-tcp-two", seed_dns_tcp },
  { "dns-a", seed_dns_a },
  { "dns-aaaa-mixed-case", seed_dns_aaaa_mixed_case },
  { "dns-edns", seed_dns_edns },
  { "dns-two-questions", seed_dns_two_questions },
  { "dns-response", seed_dns_response },
  { "dns-opcode-status", seed_dns_opcode_status },
  { "dns-mx", seed_dns_mx },
  { "raw", seed_raw },
  { "records", seed_records },
  { "records-incomplete", seed_records_incomplete },
};

/* fuzz-sinkhole reads the connections' first bytes and the record files
 * alike: one corpus. */
static const CorpusSet sinkhole = { .n_seeds = G_N_ELEMENTS (seeds), .seeds = seeds };

int
main (int argc, char **argv)
{
  return corpus_seed_main (argc, argv, &sinkhole, 1);
}

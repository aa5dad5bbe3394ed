/* The sinkhole's pure part (lib/sinkhole): the stable name → address
 * table, the DNS answerer, protocol detection and the record file.
 *
 * Each area is a table of rows.  DNS replies are compared byte for byte
 * with replies written out here by hand (the addresses in them are the
 * ones every run hands out for those names: a change to the allocation
 * fails here), then parsed back with the project's DNS decoder.  The TLS
 * ClientHellos are built byte by byte the way a TLS 1.3 client lays them
 * out, not with a TLS library. */
#include "config.h"

#include "sinkhole/sinkhole.h"
#include "evidence/dns.h"
#include "sinkhole-bytes.h"

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

/* ---- helpers ------------------------------------------------------------ */

/* Hex digits, blanks between them ignored. */
static GBytes *
hex_bytes (const char *hex)
{
  GByteArray *out = g_byte_array_new ();
  int high = -1;

  for (const char *p = hex; *p; p++)
    {
      int digit;

      if (*p == ' ')
        continue;
      digit = g_ascii_xdigit_value (*p);
      g_assert_cmpint (digit, >=, 0);
      if (high < 0)
        high = digit;
      else
        {
          guint8 b = (guint8) (high << 4 | digit);

          g_byte_array_append (out, &b, 1);
          high = -1;
        }
    }
  g_assert_cmpint (high, ==, -1);
  return g_byte_array_free_to_bytes (out);
}

static char *
address_text (int family, const guint8 *address)
{
  char text[INET6_ADDRSTRLEN];

  g_assert_nonnull (inet_ntop (family, address, text, sizeof text));
  return g_strdup (text);
}

/* The strings of @array joined with ",", "" for none, NULL for NULL. */
static char *
joined (GPtrArray *array)
{
  GString *s;

  if (!array)
    return NULL;
  s = g_string_new (NULL);
  for (guint i = 0; i < array->len; i++)
    g_string_append_printf (s, "%s%s", i ? "," : "", (const char *) g_ptr_array_index (array, i));
  return g_string_free (s, FALSE);
}

/* ---- names ------------------------------------------------------------- */

/* What every run hands out for these names: the first 4 bytes of the
 * SHA-256 of the lowercased name, modulo 2^17, added to 198.18.0.0, and
 * bytes 8–15 as the low half of 2001:db8:a1::/64 (computed apart from the
 * code, with Python's hashlib). */
typedef struct {
  const char *name;
  const char *v4;
  const char *v6;
} NameCase;

static const NameCase name_cases[] = {
  { "example.com.", "198.18.243.18", "2001:db8:a1:0:5bb0:10db:71e2:3cfd" },
  { "pypi.org.", "198.19.107.205", "2001:db8:a1:0:15f5:7e16:7f4e:9eda" },
  { "files.pythonhosted.org.", "198.18.7.56", "2001:db8:a1:0:7a45:beeb:e007:5212" },
};

static void
assert_name (AirlockSinkholeNames *names, const char *name, const char *v4, const char *v6)
{
  guint8 a4[4], a6[16];
  g_autofree char *t4 = NULL, *t6 = NULL;

  g_assert_true (airlock_sinkhole_names_lookup (names, name, a4, a6));
  t4 = address_text (AF_INET, a4);
  t6 = address_text (AF_INET6, a6);
  g_assert_cmpstr (t4, ==, v4);
  g_assert_cmpstr (t6, ==, v6);
}

static void
test_names_stable (gconstpointer data)
{
  const NameCase *c = data;
  g_autoptr (AirlockSinkholeNames) fresh = airlock_sinkhole_names_new ();
  g_autoptr (AirlockSinkholeNames) busy = airlock_sinkhole_names_new ();
  g_autofree char *upper = g_ascii_strup (c->name, -1);

  /* Alone, and after other names in another table: the same addresses. */
  assert_name (fresh, c->name, c->v4, c->v6);
  for (gsize i = G_N_ELEMENTS (name_cases); i-- > 0;)
    if (name_cases[i].name != c->name)
      assert_name (busy, name_cases[i].name, name_cases[i].v4, name_cases[i].v6);
  for (guint i = 0; i < 50; i++)
    {
      g_autofree char *other = g_strdup_printf ("filler-%u.example.", i);
      guint8 a4[4], a6[16];

      g_assert_true (airlock_sinkhole_names_lookup (busy, other, a4, a6));
    }
  assert_name (busy, c->name, c->v4, c->v6);
  /* Asked again, in another case: still the same. */
  assert_name (busy, upper, c->v4, c->v6);
  assert_name (fresh, upper, c->v4, c->v6);
}

static void
test_names_reverse (gconstpointer data)
{
  const NameCase *c = data;
  g_autoptr (AirlockSinkholeNames) names = airlock_sinkhole_names_new ();
  g_autofree char *mixed = g_strdup (c->name);
  guint8 a4[4], a6[16], other[16];

  mixed[0] = g_ascii_toupper (mixed[0]);
  g_assert_true (airlock_sinkhole_names_lookup (names, mixed, a4, a6));
  /* As first asked, whichever case a later query uses. */
  g_assert_true (airlock_sinkhole_names_lookup (names, c->name, a4, a6));
  g_assert_cmpstr (airlock_sinkhole_names_reverse (names, AF_INET, a4), ==, mixed);
  g_assert_cmpstr (airlock_sinkhole_names_reverse (names, AF_INET6, a6), ==, mixed);

  /* The right family only, and nothing for an address not handed out. */
  memcpy (other, a4, 4);
  memset (other + 4, 0, 12);
  g_assert_null (airlock_sinkhole_names_reverse (names, AF_INET6, other));
  other[3] ^= 1;
  g_assert_null (airlock_sinkhole_names_reverse (names, AF_INET, other));
  memcpy (other, a6, 16);
  other[15] ^= 1;
  g_assert_null (airlock_sinkhole_names_reverse (names, AF_INET6, other));
  /* Same low half, another prefix: not ours. */
  memcpy (other, a6, 16);
  other[5] ^= 1;
  g_assert_null (airlock_sinkhole_names_reverse (names, AF_INET6, other));
}

/* Many names: distinct addresses, all in the ranges, none reserved, each
 * mapping back to its name. */
static void
test_names_distinct (void)
{
  g_autoptr (AirlockSinkholeNames) names = airlock_sinkhole_names_new ();
  g_autoptr (GHashTable) seen4 = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) seen6 = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  static const guint8 v6_prefix[8] = { 0x20, 0x01, 0x0d, 0xb8, 0x00, 0xa1, 0x00, 0x00 };

  for (guint i = 0; i < 5000; i++)
    {
      g_autofree char *name = g_strdup_printf ("host-%u.example.", i);
      guint8 a4[4], a6[16];
      guint64 low = 0;

      g_assert_true (airlock_sinkhole_names_lookup (names, name, a4, a6));
      /* 198.18.0.0/15 without 198.18.0.0/24, .0 and .255 */
      g_assert_cmpint (a4[0], ==, 198);
      g_assert_cmpint (a4[1] & 0xfe, ==, 18);
      g_assert_false (a4[1] == 18 && a4[2] == 0);
      g_assert_cmpint (a4[3], !=, 0);
      g_assert_cmpint (a4[3], !=, 255);
      /* 2001:db8:a1::/64 without 2001:db8:a1::/112 */
      g_assert_cmpmem (a6, 8, v6_prefix, 8);
      for (int j = 8; j < 16; j++)
        low = low << 8 | a6[j];
      g_assert_cmpuint (low, >, 0xffff);

      g_assert_true (g_hash_table_add (seen4, address_text (AF_INET, a4)));
      g_assert_true (g_hash_table_add (seen6, address_text (AF_INET6, a6)));
      g_assert_cmpstr (airlock_sinkhole_names_reverse (names, AF_INET, a4), ==, name);
      g_assert_cmpstr (airlock_sinkhole_names_reverse (names, AF_INET6, a6), ==, name);
    }
}

/* The IPv4 slot a name hashes to before probing, computed here. */
static guint32
home_slot (const char *name)
{
  g_autoptr (GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA256);
  guint8 digest[32];
  gsize len = sizeof digest;

  g_checksum_update (checksum, (const guchar *) name, -1);
  g_checksum_get_digest (checksum, digest, &len);
  return ((guint32) digest[0] << 24 | (guint32) digest[1] << 16 | (guint32) digest[2] << 8
          | digest[3]) % (1u << 17);
}

/* Two names with the same home: the later one moves, in that run only. */
static void
test_names_collision (void)
{
  g_autoptr (GHashTable) homes = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  g_autofree char *first = NULL, *second = NULL;
  g_autoptr (AirlockSinkholeNames) both = airlock_sinkhole_names_new ();
  g_autoptr (AirlockSinkholeNames) alone = airlock_sinkhole_names_new ();
  guint8 f4[4], s4[4], alone4[4], a6[16];
  guint32 home = 0;

  /* A birthday search over 2^17 slots: a pair within a few thousand. */
  for (guint i = 0; !second; i++)
    {
      g_autofree char *name = g_strdup_printf ("c%u.example.", i);
      guint32 slot = home_slot (name);
      const char *earlier;

      g_assert_cmpuint (i, <, 100000);
      /* A usable home, so neither moves for being reserved. */
      if (slot < 256 || (slot & 0xff) == 0 || (slot & 0xff) >= 254)
        continue;
      earlier = g_hash_table_lookup (homes, GUINT_TO_POINTER (slot));
      if (earlier)
        {
          first = g_strdup (earlier);
          second = g_steal_pointer (&name);
          home = slot;
        }
      else
        g_hash_table_insert (homes, GUINT_TO_POINTER (slot), g_steal_pointer (&name));
    }

  g_assert_true (airlock_sinkhole_names_lookup (both, first, f4, a6));
  g_assert_true (airlock_sinkhole_names_lookup (both, second, s4, a6));
  g_assert_true (airlock_sinkhole_names_lookup (alone, second, alone4, a6));
  g_assert_cmpuint ((guint32) (f4[1] - 18) << 16 | (guint32) f4[2] << 8 | f4[3], ==, home);
  g_assert_cmpuint ((guint32) (alone4[1] - 18) << 16 | (guint32) alone4[2] << 8 | alone4[3], ==,
                    home);
  /* The next slot (home + 1 is usable: its last byte is at most 254). */
  g_assert_cmpuint ((guint32) (s4[1] - 18) << 16 | (guint32) s4[2] << 8 | s4[3], ==, home + 1);
  g_assert_cmpstr (airlock_sinkhole_names_reverse (both, AF_INET, f4), ==, first);
  g_assert_cmpstr (airlock_sinkhole_names_reverse (both, AF_INET, s4), ==, second);
}

static void
test_names_full (void)
{
  g_autoptr (AirlockSinkholeNames) names = airlock_sinkhole_names_new ();
  guint8 a4[4], a6[16];

  for (guint i = 0; i < AIRLOCK_SINKHOLE_NAMES_MAX; i++)
    {
      g_autofree char *name = g_strdup_printf ("n%u.", i);

      g_assert_true (airlock_sinkhole_names_lookup (names, name, a4, a6));
    }
  g_assert_false (airlock_sinkhole_names_lookup (names, "one-more.example.", a4, a6));
  /* A name already handed out still answers. */
  g_assert_true (airlock_sinkhole_names_lookup (names, "N7.", a4, a6));
  g_assert_cmpstr (airlock_sinkhole_names_reverse (names, AF_INET, a4), ==, "n7.");
}

/* ---- DNS ---------------------------------------------------------------- */

/* example.com, and the same name as a client doing DNS 0x20 writes it */
#define EX "07 6578616d706c65 03 636f6d 00"
#define EX_MIXED "07 4578416d506c45 03 636f6d 00"
#define A_EXAMPLE "c612f312"
#define AAAA_EXAMPLE "20010db800a100005bb010db71e23cfd"

typedef struct {
  const char *path;
  const char *query;
  gboolean tcp;          /* the query has the 2-byte length TCP puts first */
  const char *reply;     /* NULL: no reply */
  guint16 rcode;
  const char *question;  /* the exchange's */
  guint16 qtype;
  const char *answers;   /* joined */
} DnsCase;

static const DnsCase dns_cases[] = {
  { "a",
    "1234 0100 0001 0000 0000 0000" EX "0001 0001", FALSE,
    "1234 8580 0001 0001 0000 0000" EX "0001 0001" "c00c 0001 0001 0000003c 0004" A_EXAMPLE,
    0, "example.com.", 1, "198.18.243.18" },
  /* The question comes back in the case it was asked; the address is the
   * name's, whatever the case. */
  { "aaaa-mixed-case",
    "beef 0100 0001 0000 0000 0000" EX_MIXED "001c 0001", FALSE,
    "beef 8580 0001 0001 0000 0000" EX_MIXED "001c 0001" "c00c 001c 0001 0000003c 0010"
    AAAA_EXAMPLE,
    0, "ExAmPlE.com.", 28, "2001:db8:a1:0:5bb0:10db:71e2:3cfd" },
  { "mx-empty",
    "0001 0100 0001 0000 0000 0000" EX "000f 0001", FALSE,
    "0001 8580 0001 0000 0000 0000" EX "000f 0001",
    0, "example.com.", 15, "" },
  { "txt-empty",
    "0002 0100 0001 0000 0000 0000" EX "0010 0001", FALSE,
    "0002 8580 0001 0000 0000 0000" EX "0010 0001",
    0, "example.com.", 16, "" },
  { "any-empty",
    "0003 0100 0001 0000 0000 0000" EX "00ff 0001", FALSE,
    "0003 8580 0001 0000 0000 0000" EX "00ff 0001",
    0, "example.com.", 255, "" },
  /* RD is echoed: clear in, clear out. */
  { "no-recursion-desired",
    "0004 0000 0001 0000 0000 0000" EX "0001 0001", FALSE,
    "0004 8480 0001 0001 0000 0000" EX "0001 0001" "c00c 0001 0001 0000003c 0004" A_EXAMPLE,
    0, "example.com.", 1, "198.18.243.18" },
  { "class-chaos-refused",
    "0005 0100 0001 0000 0000 0000" EX "0010 0003", FALSE,
    "0005 8585 0001 0000 0000 0000" EX "0010 0003",
    5, "example.com.", 16, "" },
  /* Opcode 2 (STATUS), echoed with NOTIMP. */
  { "opcode-notimp",
    "0006 1100 0001 0000 0000 0000" EX "0001 0001", FALSE,
    "0006 9584 0001 0000 0000 0000" EX "0001 0001",
    4, "example.com.", 1, "" },
  /* A response is never answered (two sinkholes would loop). */
  { "response-bit-no-reply",
    "0007 8180 0001 0000 0000 0000" EX "0001 0001", FALSE,
    NULL, 1, "example.com.", 1, "" },
  { "short-no-reply", "0008 01", FALSE, NULL, 1, NULL, 0, "" },
  { "empty-no-reply", "", FALSE, NULL, 1, NULL, 0, "" },
  /* The name ends inside its second label. */
  { "malformed-formerr",
    "0009 0100 0001 0000 0000 0000 07 6578616d706c65 03 636f", FALSE,
    "0009 8581 0000 0000 0000 0000",
    1, NULL, 0, "" },
  { "two-questions-formerr",
    "000a 0100 0002 0000 0000 0000" EX "0001 0001" "c00c 001c 0001", FALSE,
    "000a 8581 0000 0000 0000 0000",
    1, "example.com.", 1, "" },
  { "no-question-formerr",
    "000b 0100 0000 0000 0000 0000", FALSE,
    "000b 8581 0000 0000 0000 0000",
    1, NULL, 0, "" },
  /* An EDNS OPT record (UDP size 4096, DO clear) is accepted; the reply
   * has none. */
  { "edns-ignored",
    "000c 0120 0001 0000 0000 0001" EX "0001 0001" "00 0029 1000 00 00 0000 0000", FALSE,
    "000c 8580 0001 0001 0000 0000" EX "0001 0001" "c00c 0001 0001 0000003c 0004" A_EXAMPLE,
    0, "example.com.", 1, "198.18.243.18" },
  /* A question name that points back at itself: no name, FORMERR. */
  { "compressed-question-formerr",
    "000d 0100 0001 0000 0000 0000 03 777777 c00c 0001 0001", FALSE,
    "000d 8581 0000 0000 0000 0000",
    1, NULL, 0, "" },
  /* Bytes past what the counts describe. */
  { "trailing-bytes-formerr",
    "000e 0100 0001 0000 0000 0000" EX "0001 0001 00", FALSE,
    "000e 8581 0001 0000 0000 0000" EX "0001 0001",
    1, "example.com.", 1, "" },
  /* Over TCP: the message after its length, answered the same way. */
  { "tcp-message",
    "001d 000f 0100 0001 0000 0000 0000" EX "0001 0001", TRUE,
    "000f 8580 0001 0001 0000 0000" EX "0001 0001" "c00c 0001 0001 0000003c 0004" A_EXAMPLE,
    0, "example.com.", 1, "198.18.243.18" },
};

/* The reply, decoded by the project's own parser: well-formed, a
 * response to this query, and its question the query's. */
static void
check_reply_parses (const guint8 *query, gsize query_len, GBytes *reply)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (reply, &len);
  g_autoptr (AirlockDnsQuery) parsed = airlock_dns_parse_query (data, len, len);
  g_autoptr (AirlockDnsQuery) asked = airlock_dns_parse_query (query, query_len, query_len);

  g_assert_cmpint (parsed->problem, ==, AIRLOCK_DNS_WELL_FORMED);
  g_assert_cmpuint (parsed->id, ==, asked->id);
  g_assert_cmpuint (parsed->flags & 0x8000, ==, 0x8000);
  g_assert_cmpuint (parsed->flags & 0x7900, ==, asked->flags & 0x7900);
  if (parsed->qdcount == 1)
    {
      AirlockDnsQuestion *p = g_ptr_array_index (parsed->questions, 0);
      AirlockDnsQuestion *a = g_ptr_array_index (asked->questions, 0);

      g_assert_cmpstr (p->name, ==, a->name);
      g_assert_cmpuint (p->qtype, ==, a->qtype);
      g_assert_cmpuint (p->qclass, ==, a->qclass);
    }
}

static void
test_dns_answer (gconstpointer data)
{
  const DnsCase *c = data;
  g_autoptr (AirlockSinkholeNames) names = airlock_sinkhole_names_new ();
  g_autoptr (GBytes) query = hex_bytes (c->query);
  g_autoptr (GBytes) reply = NULL;
  AirlockSinkholeDnsExchange exchange;
  g_autofree char *answers = NULL;
  const guint8 *msg;
  gsize len;

  msg = g_bytes_get_data (query, &len);
  if (c->tcp)
    {
      g_assert_cmpuint (len, >=, 2);
      g_assert_cmpuint ((gsize) (msg[0] << 8 | msg[1]), ==, len - 2);
      msg += 2;
      len -= 2;
    }
  reply = airlock_sinkhole_dns_answer (names, msg, len, &exchange);
  if (c->reply)
    {
      g_autoptr (GBytes) expected = hex_bytes (c->reply);

      g_assert_nonnull (reply);
      g_assert_cmpmem (g_bytes_get_data (reply, NULL), g_bytes_get_size (reply),
                       g_bytes_get_data (expected, NULL), g_bytes_get_size (expected));
      check_reply_parses (msg, len, reply);
    }
  else
    g_assert_null (reply);

  g_assert_cmpstr (exchange.question, ==, c->question);
  g_assert_cmpuint (exchange.qtype, ==, c->qtype);
  g_assert_cmpuint (exchange.rcode, ==, c->rcode);
  g_assert_nonnull (exchange.answers);
  answers = joined (exchange.answers);
  g_assert_cmpstr (answers, ==, c->answers);
  airlock_sinkhole_dns_exchange_clear (&exchange);
  g_assert_null (exchange.question);
  g_assert_null (exchange.answers);
}

/* A full table refuses a new name's A query; a type that needs no address
 * is still answered. */
static void
test_dns_table_full (void)
{
  g_autoptr (AirlockSinkholeNames) names = airlock_sinkhole_names_new ();
  g_autoptr (GBytes) a = hex_bytes ("0010 0100 0001 0000 0000 0000" EX "0001 0001");
  g_autoptr (GBytes) a_refused = hex_bytes ("0010 8585 0001 0000 0000 0000" EX "0001 0001");
  g_autoptr (GBytes) mx = hex_bytes ("0011 0100 0001 0000 0000 0000" EX "000f 0001");
  g_autoptr (GBytes) mx_reply = hex_bytes ("0011 8580 0001 0000 0000 0000" EX "000f 0001");
  g_autoptr (GBytes) reply = NULL;
  AirlockSinkholeDnsExchange exchange;
  guint8 a4[4], a6[16];

  for (guint i = 0; i < AIRLOCK_SINKHOLE_NAMES_MAX; i++)
    {
      g_autofree char *name = g_strdup_printf ("n%u.", i);

      g_assert_true (airlock_sinkhole_names_lookup (names, name, a4, a6));
    }
  reply = airlock_sinkhole_dns_answer (names, g_bytes_get_data (a, NULL), g_bytes_get_size (a),
                                       &exchange);
  g_assert_true (g_bytes_equal (reply, a_refused));
  g_assert_cmpuint (exchange.rcode, ==, 5);
  g_assert_cmpuint (exchange.answers->len, ==, 0);
  airlock_sinkhole_dns_exchange_clear (&exchange);
  g_clear_pointer (&reply, g_bytes_unref);

  reply = airlock_sinkhole_dns_answer (names, g_bytes_get_data (mx, NULL), g_bytes_get_size (mx),
                                       &exchange);
  g_assert_true (g_bytes_equal (reply, mx_reply));
  g_assert_cmpuint (exchange.rcode, ==, 0);
  airlock_sinkhole_dns_exchange_clear (&exchange);
}

/* The answer is the table's: the address the records map back. */
static void
test_dns_answer_is_the_tables (void)
{
  g_autoptr (AirlockSinkholeNames) names = airlock_sinkhole_names_new ();
  g_autoptr (GBytes) q = hex_bytes ("0012 0100 0001 0000 0000 0000 04 70797069 03 6f7267 00 0001 0001");
  g_autoptr (GBytes) reply = NULL;
  AirlockSinkholeDnsExchange exchange;
  guint8 address[4];

  reply = airlock_sinkhole_dns_answer (names, g_bytes_get_data (q, NULL), g_bytes_get_size (q),
                                       &exchange);
  g_assert_nonnull (reply);
  g_assert_cmpuint (exchange.answers->len, ==, 1);
  g_assert_cmpint (inet_pton (AF_INET, g_ptr_array_index (exchange.answers, 0), address), ==, 1);
  g_assert_cmpmem ((const guint8 *) g_bytes_get_data (reply, NULL) + g_bytes_get_size (reply) - 4,
                   4, address, 4);
  g_assert_cmpstr (airlock_sinkhole_names_reverse (names, AF_INET, address), ==, "pypi.org.");
  airlock_sinkhole_dns_exchange_clear (&exchange);
}

/* ---- detection ---------------------------------------------------------- */

static const char *const alpn_h2[] = { "h2", "http/1.1", NULL };
static const guint16 versions_13[] = { 0x3a3a, 0x0304, 0x0303 };

static GByteArray *
tls13 (void)
{
  return sb_in_records (sb_client_hello ("example.com", alpn_h2, versions_13, 3), 16384);
}

static GByteArray *
tls13_split (void)
{
  /* The message in records of 50 bytes: the SNI lies across two. */
  return sb_in_records (sb_client_hello ("example.com", alpn_h2, versions_13, 3), 50);
}

static GByteArray *
tls12 (void)
{
  return sb_in_records (sb_client_hello ("legacy.example", NULL, NULL, 0), 16384);
}

static GByteArray *
tls_no_sni (void)
{
  static const char *const alpn[] = { "acme-tls/1", NULL };

  return sb_in_records (sb_client_hello (NULL, alpn, versions_13, 3), 16384);
}

static GByteArray *
dns_tcp_two (void)
{
  GByteArray *b = g_byte_array_new ();
  g_autoptr (GBytes) one = hex_bytes ("001d 1111 0100 0001 0000 0000 0000" EX "0001 0001");
  g_autoptr (GBytes) two = hex_bytes ("001a 2222 0100 0001 0000 0000 0000 04 70797069 03 6f7267 00 001c 0001");

  sb_raw (b, g_bytes_get_data (one, NULL), g_bytes_get_size (one));
  sb_raw (b, g_bytes_get_data (two, NULL), g_bytes_get_size (two));
  return b;
}

static GByteArray *
from_text (const char *s)
{
  GByteArray *b = g_byte_array_new ();

  sb_text (b, s);
  return b;
}

static GByteArray *
curl_http (void)
{
  return from_text ("GET /simple/requests/ HTTP/1.1\r\nHost: pypi.org\r\n"
                    "User-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n");
}

static GByteArray *
http_odd_case (void)
{
  return from_text ("POST /upload HTTP/1.0\r\nhOsT:  a.example \r\nuser-AGENT:\tWget/1.21\r\n"
                    "Content-Length: 0\r\n\r\n");
}

static GByteArray *
http_hostile (void)
{
  return from_text ("GET /a\x01" "b\xff HTTP/1.1\r\nHost: x\\y\r\n\r\n");
}

static GByteArray *
ssh_banner (void)
{
  /* The banner, then the start of the binary packet that follows it. */
  return g_byte_array_append (from_text ("SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n"),
                              (const guint8 *) "\0\0\x05\xdc\x04\x14", 6);
}

static GByteArray *
ssh_too_long (void)
{
  GByteArray *b = from_text ("SSH-2.0-");

  sb_fill (b, 'a', 300);
  return b;
}

static GByteArray *
raw_binary (void)
{
  /* A length of 1: no DNS message fits. */
  return g_byte_array_append (g_byte_array_new (), (const guint8 *) "\x00\x01\x02\x03\xff", 5);
}

static GByteArray *
raw_text (void)
{
  return from_text ("hello there\n");
}

static GByteArray *
empty (void)
{
  return g_byte_array_new ();
}

typedef struct {
  const char *path;
  GByteArray *(*make) (void);
  gsize cut;             /* 0: all the bytes, else the first @cut */
  guint16 port;
  gboolean final;
  AirlockSinkholeDetectResult result;
  AirlockSinkholeProtocol protocol;
  /* HTTP method, path, version, host, user agent; TLS SNI, ALPN (joined),
   * version; SSH banner; DNS questions (joined) */
  const char *fields[10];
} DetectCase;

#define NEED_MORE AIRLOCK_SINKHOLE_DETECT_NEED_MORE
#define DONE AIRLOCK_SINKHOLE_DETECT_DONE
#define P(x) AIRLOCK_SINKHOLE_PROTOCOL_##x

static const DetectCase detect_cases[] = {
  { "http-curl", curl_http, 0, 80, FALSE, DONE, P (HTTP),
    { "GET", "/simple/requests/", "HTTP/1.1", "pypi.org", "curl/7.88.1" } },
  { "http-header-names-any-case", http_odd_case, 0, 8080, FALSE, DONE, P (HTTP),
    { "POST", "/upload", "HTTP/1.0", "a.example", "Wget/1.21" } },
  { "http-guest-bytes-escaped", http_hostile, 0, 80, FALSE, DONE, P (HTTP),
    { "GET", "/a\\x01b\\xff", "HTTP/1.1", "x\\\\y", NULL } },
  /* The head is not over until its empty line. */
  { "http-partial-head", curl_http, 60, 80, FALSE, NEED_MORE, P (NONE), { NULL } },
  { "http-partial-head-final", curl_http, 60, 80, TRUE, DONE, P (HTTP),
    { "GET", "/simple/requests/", "HTTP/1.1", "pypi.org", NULL } },
  { "http-method-prefix", curl_http, 2, 80, FALSE, NEED_MORE, P (NONE), { NULL } },
  { "http-method-prefix-final-is-raw", curl_http, 2, 80, TRUE, DONE, P (RAW), { NULL } },
  { "tls13-sni-alpn", tls13, 0, 443, FALSE, DONE, P (TLS),
    { [5] = "example.com", [6] = "h2,http/1.1", [7] = "1.3" } },
  { "tls13-across-records", tls13_split, 0, 443, FALSE, DONE, P (TLS),
    { [5] = "example.com", [6] = "h2,http/1.1", [7] = "1.3" } },
  /* By content: TLS to port 80 is TLS. */
  { "tls-on-port-80", tls13, 0, 80, FALSE, DONE, P (TLS),
    { [5] = "example.com", [6] = "h2,http/1.1", [7] = "1.3" } },
  { "tls12-legacy-version", tls12, 0, 443, FALSE, DONE, P (TLS),
    { [5] = "legacy.example", [6] = "", [7] = "1.2" } },
  { "tls-without-sni", tls_no_sni, 0, 443, FALSE, DONE, P (TLS),
    { [6] = "acme-tls/1", [7] = "1.3" } },
  { "tls-partial", tls13, 60, 443, FALSE, NEED_MORE, P (NONE), { NULL } },
  { "tls-partial-split", tls13_split, 100, 443, FALSE, NEED_MORE, P (NONE), { NULL } },
  { "tls-partial-final", tls13, 60, 443, TRUE, DONE, P (TLS), { [6] = "" } },
  { "ssh-banner", ssh_banner, 0, 22, FALSE, DONE, P (SSH),
    { [8] = "SSH-2.0-OpenSSH_9.2p1 Debian-2" } },
  { "ssh-partial", ssh_banner, 12, 22, FALSE, NEED_MORE, P (NONE), { NULL } },
  { "ssh-partial-final", ssh_banner, 12, 22, TRUE, DONE, P (SSH), { [8] = "SSH-2.0-Open" } },
  { "ssh-line-too-long-is-raw", ssh_too_long, 0, 22, FALSE, DONE, P (RAW), { NULL } },
  { "dns-tcp-port-53", dns_tcp_two, 0, 53, FALSE, DONE, P (DNS),
    { [9] = "example.com.,pypi.org." } },
  { "dns-tcp-by-content", dns_tcp_two, 0, 5353, FALSE, DONE, P (DNS),
    { [9] = "example.com.,pypi.org." } },
  { "dns-tcp-first-message-only", dns_tcp_two, 31, 5353, FALSE, DONE, P (DNS),
    { [9] = "example.com." } },
  { "dns-tcp-partial", dns_tcp_two, 10, 53, FALSE, NEED_MORE, P (NONE), { NULL } },
  { "dns-tcp-partial-final", dns_tcp_two, 10, 53, TRUE, DONE, P (DNS), { [9] = "" } },
  { "dns-tcp-one-byte-final", dns_tcp_two, 1, 53, TRUE, DONE, P (DNS), { [9] = "" } },
  { "dns-tcp-one-byte-final-elsewhere", dns_tcp_two, 1, 5353, TRUE, DONE, P (RAW), { NULL } },
  { "raw-binary", raw_binary, 0, 9000, FALSE, DONE, P (RAW), { NULL } },
  { "raw-text", raw_text, 0, 7, FALSE, DONE, P (RAW), { NULL } },
  /* Port 53 is a hint: an HTTP request there is HTTP. */
  { "http-on-port-53", curl_http, 0, 53, FALSE, DONE, P (HTTP),
    { "GET", "/simple/requests/", "HTTP/1.1", "pypi.org", "curl/7.88.1" } },
  { "nothing-yet", empty, 0, 80, FALSE, NEED_MORE, P (NONE), { NULL } },
  { "nothing-at-all", empty, 0, 80, TRUE, DONE, P (NONE), { NULL } },
};

static void
test_detect (gconstpointer data)
{
  const DetectCase *c = data;
  g_autoptr (GByteArray) bytes = c->make ();
  gsize len = c->cut ? c->cut : bytes->len;
  AirlockSinkholeDetected d;
  AirlockSinkholeDetectResult result;
  g_autofree char *alpn = NULL, *questions = NULL;

  g_assert_cmpuint (len, <=, bytes->len);
  result = airlock_sinkhole_detect (bytes->data, len, c->port, c->final, &d);
  g_assert_cmpint (result, ==, c->result);
  if (result == NEED_MORE)
    {
      airlock_sinkhole_detected_clear (&d);
      return;
    }
  g_assert_cmpstr (airlock_sinkhole_protocol_to_string (d.protocol), ==,
                   airlock_sinkhole_protocol_to_string (c->protocol));
  g_assert_cmpstr (d.http_method, ==, c->fields[0]);
  g_assert_cmpstr (d.http_path, ==, c->fields[1]);
  g_assert_cmpstr (d.http_version, ==, c->fields[2]);
  g_assert_cmpstr (d.http_host, ==, c->fields[3]);
  g_assert_cmpstr (d.http_user_agent, ==, c->fields[4]);
  g_assert_cmpstr (d.tls_sni, ==, c->fields[5]);
  alpn = joined (d.tls_alpn);
  g_assert_cmpstr (alpn, ==, c->fields[6]);
  g_assert_cmpstr (d.tls_version, ==, c->fields[7]);
  g_assert_cmpstr (d.ssh_banner, ==, c->fields[8]);
  questions = joined (d.dns_questions);
  g_assert_cmpstr (questions, ==, c->fields[9]);
  /* Never NULL once TLS. */
  if (d.protocol == P (TLS))
    g_assert_nonnull (d.tls_alpn);
  airlock_sinkhole_detected_clear (&d);
  g_assert_null (d.tls_alpn);
}

/* Fed a byte at a time, each row's bytes say NEED_MORE until they say what
 * the whole says. */
static void
test_detect_byte_by_byte (gconstpointer data)
{
  const DetectCase *c = data;
  g_autoptr (GByteArray) bytes = c->make ();
  AirlockSinkholeDetected whole, part;
  gboolean done = FALSE;

  g_assert_cmpint (airlock_sinkhole_detect (bytes->data, bytes->len, c->port, TRUE, &whole), ==,
                   DONE);
  for (gsize n = 0; n <= bytes->len && !done; n++)
    {
      done = airlock_sinkhole_detect (bytes->data, n, c->port, FALSE, &part) == DONE;
      if (done)
        g_assert_cmpint (part.protocol, ==, whole.protocol);
      airlock_sinkhole_detected_clear (&part);
    }
  g_assert_true (done);
  airlock_sinkhole_detected_clear (&whole);
}

/* ---- records ------------------------------------------------------------ */

static GPtrArray *
strings (const char *first, ...)
{
  GPtrArray *a = g_ptr_array_new_with_free_func (g_free);
  va_list ap;

  va_start (ap, first);
  for (const char *s = first; s; s = va_arg (ap, const char *))
    g_ptr_array_add (a, g_strdup (s));
  va_end (ap);
  return a;
}

/* One of each kind, with every member the format has. */
static GPtrArray *
sample_records (void)
{
  GPtrArray *records = g_ptr_array_new_with_free_func ((GDestroyNotify) airlock_sinkhole_record_free);
  AirlockSinkholeRecord *r;

  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_DNS, 1000, AF_INET, "10.0.2.3", 53, 40000);
  r->dns_transport = g_strdup ("udp");
  r->dns.question = g_strdup ("example.com.");
  r->dns.qtype = 1;
  g_ptr_array_add (r->dns.answers, g_strdup ("198.18.243.18"));
  g_ptr_array_add (records, r);

  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_DNS, 1100, AF_INET6, "fd00::3", 53, 40001);
  r->dns_transport = g_strdup ("tcp");
  r->dns.question = g_strdup ("example.com.");
  r->dns.qtype = 28;
  g_ptr_array_add (r->dns.answers, g_strdup ("2001:db8:a1:0:5bb0:10db:71e2:3cfd"));
  g_ptr_array_add (records, r);

  /* An unanswered message: no question, FORMERR. */
  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_DNS, 1150, AF_INET, "10.0.2.3", 53, 40002);
  r->dns_transport = g_strdup ("udp");
  r->dns.rcode = 1;
  g_ptr_array_add (records, r);

  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_TCP, 2000, AF_INET, "198.18.243.18", 80, 40010);
  r->end_us = 2500;
  r->name = g_strdup ("example.com.");
  r->detected.protocol = P (HTTP);
  r->detected.http_method = g_strdup ("GET");
  r->detected.http_path = g_strdup ("/");
  r->detected.http_version = g_strdup ("HTTP/1.1");
  r->detected.http_host = g_strdup ("example.com");
  r->detected.http_user_agent = g_strdup ("curl/7.88.1");
  g_bytes_unref (r->client_bytes);
  r->client_bytes = g_bytes_new_static ("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", 37);
  g_bytes_unref (r->server_bytes);
  r->server_bytes = g_bytes_new_static ("HTTP/1.1 200 OK\r\n\r\n\x00\xff", 21);
  r->bytes_in = 37;
  r->bytes_out = 4096;
  r->response = g_strdup ("fixture example.com:80");
  g_ptr_array_add (records, r);

  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_TCP, 3000, AF_INET6, "2001:db8:a1:0:5bb0:10db:71e2:3cfd",
                  443, 40011);
  r->end_us = 3900;
  r->name = g_strdup ("example.com.");
  r->detected.protocol = P (TLS);
  r->detected.tls_sni = g_strdup ("example.com");
  r->detected.tls_alpn = strings ("h2", "http/1.1", NULL);
  r->detected.tls_version = g_strdup ("1.3");
  g_bytes_unref (r->client_bytes);
  r->client_bytes = g_bytes_new_static ("\x16\x03\x01\x00\x01\x01", 6);
  r->bytes_in = 517;
  r->response = g_strdup ("closed");
  g_ptr_array_add (records, r);

  /* TLS that offered no ALPN: the empty list survives. */
  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_TCP, 3100, AF_INET, "198.19.107.205", 443, 40012);
  r->detected.protocol = P (TLS);
  r->detected.tls_alpn = g_ptr_array_new_with_free_func (g_free);
  r->response = g_strdup ("closed");
  g_ptr_array_add (records, r);

  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_TCP, 3200, AF_INET, "203.0.113.9", 22, 40013);
  r->detected.protocol = P (SSH);
  r->detected.ssh_banner = g_strdup ("SSH-2.0-OpenSSH_9.2p1 Debian-2");
  r->response = g_strdup ("closed");
  g_ptr_array_add (records, r);

  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_TCP, 3300, AF_INET, "10.0.2.3", 53, 40014);
  r->detected.protocol = P (DNS);
  r->detected.dns_questions = strings ("example.com.", "pypi.org.", NULL);
  r->response = g_strdup ("closed");
  g_ptr_array_add (records, r);

  /* Nothing sent, no response yet decided. */
  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_TCP, 3400, AF_INET, "198.51.100.7", 7001, 40015);
  g_ptr_array_add (records, r);

  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_UDP, 4000, AF_INET, "198.51.100.9", 123, 40020);
  g_bytes_unref (r->client_bytes);
  r->client_bytes = g_bytes_new_static ("\x23\x00\x00\x00", 4);
  r->bytes_in = 48;
  g_ptr_array_add (records, r);

  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_ICMP, 5000, AF_INET6, "2001:db8::1", 0, 0);
  g_bytes_unref (r->client_bytes);
  r->client_bytes = g_bytes_new_static ("ping", 4);
  r->bytes_in = 4;
  g_ptr_array_add (records, r);
  return records;
}

static GBytes *
record_file (GPtrArray *records, guint64 dropped, gboolean end)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < records->len; i++)
    {
      g_autofree char *line = airlock_sinkhole_record_to_json (g_ptr_array_index (records, i));

      g_assert_null (strchr (line, '\n'));
      g_string_append_printf (s, "%s\n", line);
    }
  if (end)
    {
      g_autofree char *line = airlock_sinkhole_end_line_to_json (dropped, 0, NULL);

      g_string_append_printf (s, "%s\n", line);
    }
  return g_string_free_to_bytes (s);
}

static void
test_records_round_trip (void)
{
  g_autoptr (GPtrArray) records = sample_records ();
  g_autoptr (GBytes) file = record_file (records, 7, TRUE);
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockSinkholeLog) log = airlock_sinkhole_log_new_from_bytes (file, &error);
  g_autoptr (GBytes) again = NULL;

  g_assert_no_error (error);
  g_assert_true (log->complete);
  g_assert_null (log->incomplete_reason);
  g_assert_cmpuint (log->records_dropped, ==, 7);
  g_assert_cmpuint (log->records->len, ==, records->len);
  for (guint i = 0; i < records->len; i++)
    {
      AirlockSinkholeRecord *w = g_ptr_array_index (records, i);
      AirlockSinkholeRecord *r = g_ptr_array_index (log->records, i);

      g_assert_cmpint (r->kind, ==, w->kind);
      g_assert_cmpint (r->family, ==, w->family);
      g_assert_cmpmem (r->address, 16, w->address, 16);
      g_assert_true (g_bytes_equal (r->client_bytes, w->client_bytes));
      g_assert_true (g_bytes_equal (r->server_bytes, w->server_bytes));
      g_assert_nonnull (r->dns.answers);
    }
  /* Written again from what was read: the same file, byte for byte. */
  again = record_file (log->records, 7, TRUE);
  g_assert_cmpmem (g_bytes_get_data (again, NULL), g_bytes_get_size (again),
                   g_bytes_get_data (file, NULL), g_bytes_get_size (file));
}

/* The format as docs/sinkhole.md describes it: one line per kind. */
static void
test_records_format (void)
{
  g_autoptr (GPtrArray) records = sample_records ();
  static const struct {
    guint index;
    const char *json;
  } lines[] = {
    { 0, "{\"kind\":\"dns\",\"time_us\":1000,\"end_us\":1000,\"family\":\"inet\",\"address\":\"10.0.2.3\","
         "\"port\":53,\"client_port\":40000,\"transport\":\"udp\",\"question\":\"example.com.\","
         "\"qtype\":1,\"rcode\":0,\"answers\":[\"198.18.243.18\"]}" },
    { 3, "{\"kind\":\"tcp\",\"time_us\":2000,\"end_us\":2500,\"family\":\"inet\","
         "\"address\":\"198.18.243.18\",\"port\":80,\"client_port\":40010,\"name\":\"example.com.\","
         "\"protocol\":\"http\",\"http\":{\"method\":\"GET\",\"path\":\"/\",\"version\":\"HTTP/1.1\","
         "\"host\":\"example.com\",\"user_agent\":\"curl/7.88.1\"},"
         "\"client_bytes\":\"R0VUIC8gSFRUUC8xLjENCkhvc3Q6IGV4YW1wbGUuY29tDQoNCg==\","
         "\"server_bytes\":\"SFRUUC8xLjEgMjAwIE9LDQoNCgD/\",\"bytes_in\":37,\"bytes_out\":4096,"
         "\"response\":\"fixture example.com:80\"}" },
    { 4, "{\"kind\":\"tcp\",\"time_us\":3000,\"end_us\":3900,\"family\":\"inet6\","
         "\"address\":\"2001:db8:a1:0:5bb0:10db:71e2:3cfd\",\"port\":443,\"client_port\":40011,"
         "\"name\":\"example.com.\",\"protocol\":\"tls\",\"tls\":{\"sni\":\"example.com\","
         "\"alpn\":[\"h2\",\"http/1.1\"],\"version\":\"1.3\"},\"client_bytes\":\"FgMBAAEB\","
         "\"server_bytes\":\"\",\"bytes_in\":517,\"bytes_out\":0,\"response\":\"closed\"}" },
    { 6, "{\"kind\":\"tcp\",\"time_us\":3200,\"end_us\":3200,\"family\":\"inet\",\"address\":\"203.0.113.9\","
         "\"port\":22,\"client_port\":40013,\"protocol\":\"ssh\",\"ssh\":{\"banner\":"
         "\"SSH-2.0-OpenSSH_9.2p1 Debian-2\"},\"client_bytes\":\"\",\"server_bytes\":\"\","
         "\"bytes_in\":0,\"bytes_out\":0,\"response\":\"closed\"}" },
    { 7, "{\"kind\":\"tcp\",\"time_us\":3300,\"end_us\":3300,\"family\":\"inet\",\"address\":\"10.0.2.3\","
         "\"port\":53,\"client_port\":40014,\"protocol\":\"dns\",\"dns_questions\":[\"example.com.\","
         "\"pypi.org.\"],\"client_bytes\":\"\",\"server_bytes\":\"\",\"bytes_in\":0,\"bytes_out\":0,"
         "\"response\":\"closed\"}" },
    { 9, "{\"kind\":\"udp\",\"time_us\":4000,\"end_us\":4000,\"family\":\"inet\",\"address\":\"198.51.100.9\","
         "\"port\":123,\"client_port\":40020,\"client_bytes\":\"IwAAAA==\",\"bytes_in\":48}" },
    { 10, "{\"kind\":\"icmp\",\"time_us\":5000,\"end_us\":5000,\"family\":\"inet6\",\"address\":\"2001:db8::1\","
          "\"port\":0,\"client_port\":0,\"client_bytes\":\"cGluZw==\",\"bytes_in\":4}" },
  };
  g_autofree char *end = airlock_sinkhole_end_line_to_json (3, 0, NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (lines); i++)
    {
      g_autofree char *json = airlock_sinkhole_record_to_json (g_ptr_array_index (records, lines[i].index));

      g_assert_cmpstr (json, ==, lines[i].json);
    }
  g_assert_cmpstr (end, ==, "{\"end\":true,\"records_dropped\":3,\"frames_refused\":0}");
}

static void
test_records_name_for_address (void)
{
  g_autoptr (GPtrArray) records = sample_records ();
  g_autoptr (GBytes) file = NULL;
  g_autoptr (AirlockSinkholeLog) log = NULL;
  AirlockSinkholeRecord *r;
  guint8 address[16];

  /* A record whose address was named by the process, not by an answer. */
  r = sb_record_new (AIRLOCK_SINKHOLE_RECORD_TCP, 6000, AF_INET, "198.18.7.56", 443, 40030);
  r->name = g_strdup ("files.pythonhosted.org.");
  g_ptr_array_add (records, r);
  file = record_file (records, 0, TRUE);
  log = airlock_sinkhole_log_new_from_bytes (file, NULL);
  g_assert_nonnull (log);

  inet_pton (AF_INET, "198.18.243.18", address);
  g_assert_cmpstr (airlock_sinkhole_log_name_for_address (log, AF_INET, address), ==, "example.com.");
  inet_pton (AF_INET6, "2001:db8:a1:0:5bb0:10db:71e2:3cfd", address);
  g_assert_cmpstr (airlock_sinkhole_log_name_for_address (log, AF_INET6, address), ==, "example.com.");
  inet_pton (AF_INET, "198.18.7.56", address);
  g_assert_cmpstr (airlock_sinkhole_log_name_for_address (log, AF_INET, address), ==,
                   "files.pythonhosted.org.");
  /* Never answered, never named; and the family counts. */
  inet_pton (AF_INET, "198.51.100.9", address);
  g_assert_null (airlock_sinkhole_log_name_for_address (log, AF_INET, address));
  inet_pton (AF_INET, "198.18.243.18", address);
  memset (address + 4, 0, 12);
  g_assert_null (airlock_sinkhole_log_name_for_address (log, AF_INET6, address));

  /* A log made without the reader gives the same answers. */
  {
    AirlockSinkholeLog bare = { .records = log->records };

    g_assert_cmpstr (airlock_sinkhole_log_name_for_address (&bare, AF_INET, address), ==,
                     "example.com.");
    inet_pton (AF_INET, "198.18.7.56", address);
    g_assert_cmpstr (airlock_sinkhole_log_name_for_address (&bare, AF_INET, address), ==,
                     "files.pythonhosted.org.");
  }
}

static void
test_records_incomplete (void)
{
  g_autoptr (GPtrArray) records = sample_records ();
  g_autoptr (GBytes) file = record_file (records, 0, FALSE);
  g_autoptr (AirlockSinkholeLog) log = NULL;
  g_autoptr (AirlockSinkholeLog) cut_log = NULL;
  g_autoptr (GBytes) cut = NULL;
  g_autoptr (GError) error = NULL;

  log = airlock_sinkhole_log_new_from_bytes (file, &error);
  g_assert_no_error (error);
  g_assert_false (log->complete);
  g_assert_cmpstr (log->incomplete_reason, ==, "the sinkhole's record file ends before its final line");
  g_assert_cmpuint (log->records->len, ==, records->len);

  /* The process died inside its last line: what came before is kept. */
  cut = g_bytes_new_from_bytes (file, 0, g_bytes_get_size (file) - 20);
  cut_log = airlock_sinkhole_log_new_from_bytes (cut, &error);
  g_assert_no_error (error);
  g_assert_false (cut_log->complete);
  g_assert_cmpuint (cut_log->records->len, ==, records->len - 1);
  g_assert_nonnull (strstr (cut_log->incomplete_reason, "ends inside line 11"));
}

#define OK_DNS "{\"kind\":\"dns\",\"time_us\":1,\"end_us\":1,\"family\":\"inet\",\"address\":\"10.0.2.3\"," \
               "\"port\":53,\"client_port\":1,\"transport\":\"udp\",\"qtype\":1,\"rcode\":0,\"answers\":[]}"
#define TCP_HEAD "{\"kind\":\"tcp\",\"time_us\":1,\"end_us\":2,\"family\":\"inet\",\"address\":\"198.18.0.9\"," \
                 "\"port\":80,\"client_port\":1,"
#define END "{\"end\":true,\"records_dropped\":0}"

typedef struct {
  const char *path;
  const char *file;
  int code;
  const char *message;   /* a part of the error's message */
} RefusalCase;

static const RefusalCase refusal_cases[] = {
  { "not-json", OK_DNS "\nnot json\n" END "\n", AIRLOCK_SINKHOLE_ERROR_INVALID,
    "line 2 of the sinkhole's records: " },
  { "empty-line", OK_DNS "\n\n" END "\n", AIRLOCK_SINKHOLE_ERROR_INVALID, "line 2 of" },
  { "not-an-object", "[1]\n" END "\n", AIRLOCK_SINKHOLE_ERROR_INVALID,
    "line 1 of the sinkhole's records: an array, not an object" },
  { "too-deep", "{\"kind\":" "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
    "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "nested more than 64 levels" },
  { "port-is-a-string",
    OK_DNS "\n" TCP_HEAD "\"protocol\":\"raw\",\"client_bytes\":\"\",\"server_bytes\":\"\","
    "\"bytes_in\":0,\"bytes_out\":0}\n"
    "{\"kind\":\"udp\",\"time_us\":1,\"end_us\":1,\"family\":\"inet\",\"address\":\"10.0.0.1\","
    "\"port\":\"53\",\"client_port\":1,\"client_bytes\":\"\",\"bytes_in\":0}\n" END "\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID,
    "line 3 of the sinkhole's records: member 'port' is a string, not an integer" },
  { "port-out-of-range",
    "{\"kind\":\"udp\",\"time_us\":1,\"end_us\":1,\"family\":\"inet\",\"address\":\"10.0.0.1\","
    "\"port\":65536,\"client_port\":1,\"client_bytes\":\"\",\"bytes_in\":0}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "member 'port' is 65536" },
  { "fractional-time",
    "{\"kind\":\"icmp\",\"time_us\":1.5,\"end_us\":2,\"family\":\"inet\",\"address\":\"10.0.0.1\","
    "\"port\":0,\"client_port\":0}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "member 'time_us' is a fractional number, not an integer" },
  { "ends-before-it-starts",
    "{\"kind\":\"icmp\",\"time_us\":5,\"end_us\":2,\"family\":\"inet\",\"address\":\"10.0.0.1\","
    "\"port\":0,\"client_port\":0}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "member 'end_us' is 2, outside 5–" },
  { "missing-member",
    "{\"kind\":\"icmp\",\"time_us\":1,\"end_us\":2,\"family\":\"inet\",\"port\":0,\"client_port\":0}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "line 1 of the sinkhole's records: member 'address' is missing" },
  { "unknown-kind",
    "{\"kind\":\"sctp\",\"time_us\":1,\"end_us\":2,\"family\":\"inet\",\"address\":\"10.0.0.1\"}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "member 'kind' is 'sctp', not one of dns, tcp, udp, icmp" },
  { "address-not-of-family",
    "{\"kind\":\"icmp\",\"time_us\":1,\"end_us\":2,\"family\":\"inet6\",\"address\":\"10.0.0.1\","
    "\"port\":0,\"client_port\":0}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "member 'address' is '10.0.0.1', not an IPv6 address" },
  { "address-not-an-address",
    "{\"kind\":\"icmp\",\"time_us\":1,\"end_us\":2,\"family\":\"inet\",\"address\":\"example.com\","
    "\"port\":0,\"client_port\":0}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "member 'address' is 'example.com', not an IPv4 address" },
  /* The file's strings hold what the guest sent: quoted printably. */
  { "unknown-kind-quoted-printably",
    "{\"kind\":\"tcp\\u0007\\n\",\"time_us\":1}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "member 'kind' is 'tcp\\x07\\n', not one of" },
  { "unknown-family",
    "{\"kind\":\"icmp\",\"time_us\":1,\"end_us\":2,\"family\":\"unix\",\"address\":\"/x\","
    "\"port\":0,\"client_port\":0}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "member 'family' is 'unix', not inet or inet6" },
  { "answers-not-strings",
    "{\"kind\":\"dns\",\"time_us\":1,\"end_us\":1,\"family\":\"inet\",\"address\":\"10.0.2.3\","
    "\"port\":53,\"client_port\":1,\"transport\":\"udp\",\"qtype\":1,\"rcode\":0,\"answers\":[1]}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "element 0 of 'answers' is an integer, not a string" },
  { "transport-unknown",
    "{\"kind\":\"dns\",\"time_us\":1,\"end_us\":1,\"family\":\"inet\",\"address\":\"10.0.2.3\","
    "\"port\":53,\"client_port\":1,\"transport\":\"quic\",\"qtype\":1,\"rcode\":0,\"answers\":[]}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "member 'transport' is 'quic', not udp or tcp" },
  { "protocol-unknown",
    TCP_HEAD "\"protocol\":\"gopher\",\"client_bytes\":\"\",\"server_bytes\":\"\",\"bytes_in\":0,"
    "\"bytes_out\":0}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "member 'protocol' is 'gopher'" },
  { "http-not-an-object",
    TCP_HEAD "\"protocol\":\"http\",\"http\":\"GET /\",\"client_bytes\":\"\",\"server_bytes\":\"\","
    "\"bytes_in\":0,\"bytes_out\":0}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "member 'http' is a string, not an object" },
  { "sni-not-a-string",
    TCP_HEAD "\"protocol\":\"tls\",\"tls\":{\"sni\":true,\"alpn\":[]},\"client_bytes\":\"\","
    "\"server_bytes\":\"\",\"bytes_in\":0,\"bytes_out\":0}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "member 'sni' is a boolean, not a string" },
  { "bytes-not-base64",
    TCP_HEAD "\"protocol\":\"raw\",\"client_bytes\":\"a*==\",\"server_bytes\":\"\",\"bytes_in\":2,"
    "\"bytes_out\":0}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "member 'client_bytes' is not base64" },
  { "bytes-not-canonical-base64",
    TCP_HEAD "\"protocol\":\"raw\",\"client_bytes\":\"YR==\",\"server_bytes\":\"\",\"bytes_in\":2,"
    "\"bytes_out\":0}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "not base64 in its canonical form" },
  { "fewer-bytes-than-kept",
    TCP_HEAD "\"protocol\":\"raw\",\"client_bytes\":\"YWJj\",\"server_bytes\":\"\",\"bytes_in\":2,"
    "\"bytes_out\":0}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "member 'bytes_in' is 2, fewer than the 3 client bytes" },
  { "fewer-bytes-out-than-kept",
    TCP_HEAD "\"protocol\":\"raw\",\"client_bytes\":\"\",\"server_bytes\":\"YWJj\",\"bytes_in\":0,"
    "\"bytes_out\":0}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "member 'bytes_out' is 0, fewer than the 3 server bytes" },
  { "end-not-true", OK_DNS "\n{\"end\":false,\"records_dropped\":0}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "line 2 of the sinkhole's records: member 'end' is a boolean, not true" },
  { "end-without-count", OK_DNS "\n{\"end\":true}\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "member 'records_dropped' is missing" },
  { "line-after-end", OK_DNS "\n" END "\n" OK_DNS "\n",
    AIRLOCK_SINKHOLE_ERROR_INVALID, "line 3 of the sinkhole's records: a line after the final one" },
};

static void
test_records_refused (gconstpointer data)
{
  const RefusalCase *c = data;
  g_autoptr (GBytes) file = g_bytes_new_static (c->file, strlen (c->file));
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockSinkholeLog) log = airlock_sinkhole_log_new_from_bytes (file, &error);

  g_assert_null (log);
  g_assert_error (error, AIRLOCK_SINKHOLE_ERROR, c->code);
  if (!strstr (error->message, c->message))
    g_error ("'%s' does not say '%s'", error->message, c->message);
}

static void
test_records_oversize (void)
{
  gsize len = AIRLOCK_SINKHOLE_LOG_MAX + 1;
  guint8 *data = g_malloc (len);
  g_autoptr (GBytes) file = NULL;
  g_autoptr (GError) error = NULL;

  memset (data, ' ', len);
  file = g_bytes_new_take (data, len);
  g_assert_null (airlock_sinkhole_log_new_from_bytes (file, &error));
  g_assert_error (error, AIRLOCK_SINKHOLE_ERROR, AIRLOCK_SINKHOLE_ERROR_TOO_LARGE);
}

static void
test_records_too_many (void)
{
  GString *s = g_string_new (NULL);
  g_autoptr (GBytes) file = NULL;
  g_autoptr (GBytes) at_bound = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockSinkholeLog) log = NULL;

  for (guint i = 0; i < AIRLOCK_SINKHOLE_RECORDS_MAX; i++)
    g_string_append (s, OK_DNS "\n");
  at_bound = g_bytes_new (s->str, s->len);
  log = airlock_sinkhole_log_new_from_bytes (at_bound, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (log->records->len, ==, AIRLOCK_SINKHOLE_RECORDS_MAX);

  g_string_append (s, OK_DNS "\n" END "\n");
  file = g_string_free_to_bytes (s);
  g_assert_null (airlock_sinkhole_log_new_from_bytes (file, &error));
  g_assert_error (error, AIRLOCK_SINKHOLE_ERROR, AIRLOCK_SINKHOLE_ERROR_TOO_LARGE);
  g_assert_nonnull (strstr (error->message, "line 16385"));
}

/* ---- main --------------------------------------------------------------- */

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (name_cases); i++)
    {
      g_autofree char *stable = g_strdup_printf ("/sinkhole/names/stable/%s", name_cases[i].name);
      g_autofree char *reverse = g_strdup_printf ("/sinkhole/names/reverse/%s", name_cases[i].name);

      g_test_add_data_func (stable, &name_cases[i], test_names_stable);
      g_test_add_data_func (reverse, &name_cases[i], test_names_reverse);
    }
  g_test_add_func ("/sinkhole/names/distinct-in-range", test_names_distinct);
  g_test_add_func ("/sinkhole/names/collision-moves-the-later", test_names_collision);
  g_test_add_func ("/sinkhole/names/full", test_names_full);

  for (gsize i = 0; i < G_N_ELEMENTS (dns_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sinkhole/dns/%s", dns_cases[i].path);

      g_test_add_data_func (path, &dns_cases[i], test_dns_answer);
    }
  g_test_add_func ("/sinkhole/dns/table-full-refused", test_dns_table_full);
  g_test_add_func ("/sinkhole/dns/answer-is-the-tables", test_dns_answer_is_the_tables);

  for (gsize i = 0; i < G_N_ELEMENTS (detect_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sinkhole/detect/%s", detect_cases[i].path);

      g_test_add_data_func (path, &detect_cases[i], test_detect);
      if (detect_cases[i].cut == 0 && !detect_cases[i].final && detect_cases[i].result == DONE)
        {
          g_autofree char *bytewise = g_strdup_printf ("/sinkhole/detect/byte-by-byte/%s",
                                                       detect_cases[i].path);

          g_test_add_data_func (bytewise, &detect_cases[i], test_detect_byte_by_byte);
        }
    }

  g_test_add_func ("/sinkhole/records/round-trip", test_records_round_trip);
  g_test_add_func ("/sinkhole/records/format", test_records_format);
  g_test_add_func ("/sinkhole/records/name-for-address", test_records_name_for_address);
  g_test_add_func ("/sinkhole/records/incomplete", test_records_incomplete);
  for (gsize i = 0; i < G_N_ELEMENTS (refusal_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sinkhole/records/refused/%s", refusal_cases[i].path);

      g_test_add_data_func (path, &refusal_cases[i], test_records_refused);
    }
  g_test_add_func ("/sinkhole/records/refused/oversize", test_records_oversize);
  g_test_add_func ("/sinkhole/records/refused/too-many", test_records_too_many);

  return g_test_run ();
}

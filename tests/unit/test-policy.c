/* Unit tests for the egress allow-list (lib/policy/policy.c,
 * docs/policy.md): the grammar, every parse error with its line and
 * column, and the matcher over plain values. */
#include "config.h"

#include "policy/policy.h"

#include <arpa/inet.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#define NAME "test.policy"

static AirlockPolicy *
parse_ok (const char *text)
{
  g_autoptr(GError) error = NULL;
  AirlockPolicy *policy = airlock_policy_parse (text, strlen (text), NAME, &error);

  g_assert_no_error (error);
  g_assert_nonnull (policy);
  return policy;
}

/* An attempt to @address (IPv4 or IPv6 text) whose address was handed
 * out for @host (NULL: none), reporting the admitting rule's text in
 * @ret_rule. */
static gboolean
admits_attempt (const AirlockPolicy *policy, int protocol, const char *address, guint16 port,
                const char *const *dns_names, const char *exe, const char *host,
                const char **ret_rule)
{
  guint8 bytes[16];
  AirlockPolicyAttempt attempt = {
    .family = strchr (address, ':') != NULL ? AF_INET6 : AF_INET,
    .protocol = protocol, .address = bytes, .port = port, .dns_names = dns_names, .exe = exe,
    .host = host,
  };

  g_assert_cmpint (inet_pton (attempt.family, address, bytes), ==, 1);
  return airlock_policy_admits_attempt (policy, &attempt, ret_rule);
}

/* The same through airlock_policy_admits(), which has no host name. */
static gboolean
admits_full (const AirlockPolicy *policy, int protocol, const char *address, guint16 port,
             const char *const *dns_names, const char *exe, const char **ret_rule)
{
  guint8 bytes[16];
  int family = strchr (address, ':') != NULL ? AF_INET6 : AF_INET;

  g_assert_cmpint (inet_pton (family, address, bytes), ==, 1);
  return airlock_policy_admits (policy, family, protocol, bytes, port, dns_names, exe, ret_rule);
}

static gboolean
admits (const AirlockPolicy *policy, int protocol, const char *address, guint16 port)
{
  return admits_full (policy, protocol, address, port, NULL, NULL, NULL);
}

/* One expectation of the matcher: @policy admits (or refuses) an attempt
 * of @protocol to @destination (IPv4 or IPv6 text) and @port.  The CIDR,
 * port and protocol tests are tables of these. */
typedef struct {
  const char *policy;
  int protocol;
  const char *destination;
  guint16 port;
  gboolean admitted;
} AdmitCase;

typedef struct {
  const AdmitCase *cases;
  gsize n_cases;
} AdmitTable;

#define ADMIT_TABLE(cases) (&(const AdmitTable) { cases, G_N_ELEMENTS (cases) })

static void
test_admit_table (gconstpointer data)
{
  const AdmitTable *table = data;

  for (gsize i = 0; i < table->n_cases; i++)
    {
      const AdmitCase *c = &table->cases[i];
      g_autoptr(AirlockPolicy) policy = parse_ok (c->policy);
      gboolean admitted = admits (policy, c->protocol, c->destination, c->port);

      if (admitted != c->admitted)
        g_test_message ("'%s' must %s protocol %d to %s port %u", c->policy,
                        c->admitted ? "admit" : "refuse", c->protocol, c->destination, c->port);
      g_assert_cmpint (admitted, ==, c->admitted);
    }
}

/* ---- default and empty ---- */

static void
test_default_admits_nothing (void)
{
  g_autoptr(AirlockPolicy) policy = airlock_policy_new_default ();
  const char *names[] = { "example.com", NULL };
  const char *rule = "untouched";
  static const int protocols[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, IPPROTO_ICMPV6, 132 };
  static const char *addresses[] = { "0.0.0.0", "10.0.2.3", "127.0.0.1", "255.255.255.255",
                                     "::", "::1", "2001:db8::1", "::ffff:10.0.0.1" };

  g_assert_cmpuint (airlock_policy_get_n_rules (policy), ==, 0);
  for (gsize i = 0; i < G_N_ELEMENTS (protocols); i++)
    for (gsize j = 0; j < G_N_ELEMENTS (addresses); j++)
      {
        g_assert_false (admits_full (policy, protocols[i], addresses[j], 0, NULL, NULL, &rule));
        g_assert_false (admits_full (policy, protocols[i], addresses[j], 443, names,
                                     "/usr/bin/curl", &rule));
      }
  /* Left untouched when nothing admits. */
  g_assert_cmpstr (rule, ==, "untouched");
}

static void
test_empty_text_is_default (void)
{
  static const char *texts[] = { "", "\n", "# nothing allowed\n", "   \t \n\n  # x\r\n# y" };

  for (gsize i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      g_autoptr(AirlockPolicy) policy = parse_ok (texts[i]);

      g_assert_cmpuint (airlock_policy_get_n_rules (policy), ==, 0);
      g_assert_false (admits (policy, IPPROTO_TCP, "192.0.2.7", 80));
    }
}

/* ---- grammar ---- */

static void
test_grammar_rule_kinds (void)
{
  /* Every clause, alone and together; the text reported is the rule's
   * tokens joined by one blank, comments removed. */
  static const struct {
    const char *line;
    const char *text;
  } rules[] = {
    { "allow tcp 10.0.0.0/8 port 443", "allow tcp 10.0.0.0/8 port 443" },
    { "allow udp 2001:db8::/32 port 53 dns=*.example.com",
      "allow udp 2001:db8::/32 port 53 dns=*.example.com" },
    { "allow tcp any port 80-89 exe=/usr/bin/curl", "allow tcp any port 80-89 exe=/usr/bin/curl" },
    { "allow any 192.0.2.7", "allow any 192.0.2.7" },
    { "\t allow   icmp  any   # ping anywhere", "allow icmp any" },
    { "allow icmpv6 2001:db8::1", "allow icmpv6 2001:db8::1" },
    { "allow udp 198.51.100.0/24 exe=/bin/x dns=a.example. port 0-65535",
      "allow udp 198.51.100.0/24 exe=/bin/x dns=a.example. port 0-65535" },
    { "allow any any\r", "allow any any" },
    { "allow tcp any port 443 host=PyPI.org.", "allow tcp any port 443 host=PyPI.org." },
    { "allow udp 198.18.0.0/15 host=*.example.com port 53 dns=a.example.",
      "allow udp 198.18.0.0/15 host=*.example.com port 53 dns=a.example." },
  };
  g_autoptr(GString) text = g_string_new ("# a policy\n\n");
  g_autoptr(AirlockPolicy) policy = NULL;

  for (gsize i = 0; i < G_N_ELEMENTS (rules); i++)
    g_string_append_printf (text, "%s\n", rules[i].line);
  policy = parse_ok (text->str);
  g_assert_cmpuint (airlock_policy_get_n_rules (policy), ==, G_N_ELEMENTS (rules));

  /* Each line alone reports its own text. */
  for (gsize i = 0; i < G_N_ELEMENTS (rules); i++)
    {
      g_autoptr(AirlockPolicy) one = parse_ok (rules[i].line);
      const char *rule = NULL;
      const char *names[] = { "a.example.com", NULL };
      const char *address = strstr (rules[i].line, "2001:db8::") != NULL ? "2001:db8::1"
                            : strstr (rules[i].line, "198.51.100") != NULL ? "198.51.100.9"
                            : strstr (rules[i].line, "198.18.0.0") != NULL ? "198.19.3.7"
                            : strstr (rules[i].line, "10.0.0.0") != NULL ? "10.1.2.3"
                            : "192.0.2.7";
      int protocol = strstr (rules[i].line, "icmpv6") != NULL ? IPPROTO_ICMPV6
                     : strstr (rules[i].line, "icmp") != NULL ? IPPROTO_ICMP
                     : strstr (rules[i].line, "udp") != NULL ? IPPROTO_UDP
                     : IPPROTO_TCP;
      guint16 port = strstr (rules[i].line, "443") != NULL ? 443
                     : strstr (rules[i].line, "80-89") != NULL ? 85
                     : 53;
      const char *exe = strstr (rules[i].line, "/bin/x") != NULL ? "/bin/x" : "/usr/bin/curl";

      const char *host = strstr (rules[i].line, "host=*.example.com") != NULL ? "www.example.com."
                         : "pypi.org.";

      if (strstr (rules[i].line, "dns=a.example") != NULL)
        names[0] = "A.Example";

      g_assert_cmpuint (airlock_policy_get_n_rules (one), ==, 1);
      g_assert_true (admits_attempt (one, protocol, address, port, names, exe, host, &rule));
      g_assert_cmpstr (rule, ==, rules[i].text);
    }
}

static void
test_trailing_comment_and_blanks (void)
{
  g_autoptr(AirlockPolicy) policy =
    parse_ok ("  # leading comment\n\nallow tcp 192.0.2.0/24 port 80 # the web server\n"
              "#allow tcp any\n   \n");
  const char *rule = NULL;

  g_assert_cmpuint (airlock_policy_get_n_rules (policy), ==, 1);
  g_assert_true (admits_full (policy, IPPROTO_TCP, "192.0.2.1", 80, NULL, NULL, &rule));
  g_assert_cmpstr (rule, ==, "allow tcp 192.0.2.0/24 port 80");
  /* The commented-out rule does not exist. */
  g_assert_false (admits (policy, IPPROTO_TCP, "198.51.100.1", 80));
}

/* ---- parse errors ---- */

typedef struct {
  const char *text;
  guint line, column;
  const char *reason;   /* a part of the message after "NAME:LINE:COLUMN: " */
} ParseErrorCase;

static void
test_parse_errors (void)
{
  g_autofree char *label64 = g_strnfill (64, 'a');
  g_autofree char *long_label = g_strdup_printf ("allow udp any dns=%s.com", label64);
  g_autofree char *long_name = NULL;
  g_autoptr(GString) name = g_string_new ("allow udp any dns=");
  ParseErrorCase cases[] = {
    { "deny tcp any", 1, 1, "there are no deny rules" },
    { "permit tcp any", 1, 1, "unknown rule 'permit': every rule starts with 'allow'" },
    { "Allow tcp any", 1, 1, "unknown rule 'Allow'" },
    { "allow", 1, 6, "missing protocol after 'allow'" },
    { "allow   # comment", 1, 6, "missing protocol after 'allow'" },
    { "allow sctp any", 1, 7, "unknown protocol 'sctp'" },
    { "allow TCP any", 1, 7, "unknown protocol 'TCP'" },
    { "allow tcp", 1, 10, "missing destination" },
    { "allow tcp 10.0.0.256", 1, 11, "invalid destination '10.0.0.256'" },
    { "allow tcp 10.1/16", 1, 11, "invalid destination '10.1/16'" },
    { "allow tcp 0x0a000001", 1, 11, "invalid destination '0x0a000001'" },
    { "allow tcp example.com", 1, 11, "invalid destination 'example.com'" },
    { "allow tcp fe80::1%eth0", 1, 11, "invalid destination 'fe80::1%eth0'" },
    { "allow tcp /8", 1, 11, "invalid destination '/8'" },
    { "allow tcp any#x", 1, 11, "invalid destination 'any#x'" },
    { "allow tcp 10.0.0.0/33", 1, 20, "invalid prefix length in '10.0.0.0/33': expected 0 to 32 for an IPv4 network" },
    { "allow tcp 2001:db8::/129", 1, 22, "expected 0 to 128 for an IPv6 network" },
    { "allow tcp 10.0.0.0/", 1, 20, "invalid prefix length" },
    { "allow tcp 10.0.0.0/+8", 1, 20, "invalid prefix length" },
    { "allow tcp 10.0.0.0/8/8", 1, 20, "invalid prefix length" },
    { "allow tcp 10.0.0.1/8", 1, 11,
      "'10.0.0.1/8' has bits set after its /8 prefix: write the network as '10.0.0.0/8'" },
    { "allow tcp 192.168.1.1/0", 1, 11, "write the network as '0.0.0.0/0'" },
    { "allow tcp 10.0.0.1/31", 1, 11, "write the network as '10.0.0.0/31'" },
    { "allow tcp 2001:db8::1/32", 1, 11, "write the network as '2001:db8::/32'" },
    { "allow tcp 2001:db8::1/127", 1, 11, "write the network as '2001:db8::/127'" },
    { "allow tcp ::1/0", 1, 11, "write the network as '::/0'" },
    { "allow tcp ::ffff:10.0.0.0/104", 1, 11,
      "'::ffff:10.0.0.0/104' is a v4-mapped network: write it as IPv4, '10.0.0.0/8'" },
    { "allow tcp ::ffff:192.0.2.7", 1, 11, "write it as IPv4, '192.0.2.7/32'" },
    { "allow tcp ::ffff:0:0/96", 1, 11, "write it as IPv4, '0.0.0.0/0'" },
    { "allow icmp 2001:db8::/32", 1, 12, "icmp is IPv4's: use icmpv6" },
    { "allow icmpv6 192.0.2.0/24", 1, 14, "icmpv6 is IPv6's: use icmp" },
    { "allow tcp any port", 1, 19, "missing port after 'port'" },
    { "allow tcp any port 65536", 1, 20, "invalid port '65536'" },
    { "allow tcp any port http", 1, 20, "invalid port 'http'" },
    { "allow tcp any port 443,80", 1, 20, "invalid port '443,80'" },
    { "allow tcp any port 000443", 1, 20, "invalid port '000443'" },
    { "allow tcp any port -1", 1, 20, "invalid port range '-1'" },
    { "allow tcp any port 80-", 1, 20, "invalid port range '80-'" },
    { "allow tcp any port 1-2-3", 1, 20, "invalid port range '1-2-3'" },
    { "allow tcp any port 90-80", 1, 20, "invalid port range '90-80': 90 is above 80" },
    { "allow tcp any port 80 port 81", 1, 23, "a second 'port' in one rule" },
    { "allow icmp any port 1", 1, 16, "icmp has no ports" },
    { "allow icmpv6 any port 1", 1, 18, "icmpv6 has no ports" },
    { "allow udp any dns=", 1, 19, "empty DNS name in 'dns='" },
    { "allow udp any dns=.", 1, 19, "empty DNS name" },
    { "allow udp any dns=*", 1, 19, "misplaced '*' in 'dns=*'" },
    { "allow udp any dns=*.", 1, 19, "misplaced '*'" },
    { "allow udp any dns=*example.com", 1, 19, "misplaced '*'" },
    { "allow udp any dns=foo.*.com", 1, 23, "misplaced '*'" },
    { "allow udp any dns=*.*.com", 1, 21, "misplaced '*'" },
    { "allow udp any dns=a..com", 1, 21, "empty label in DNS name 'dns=a..com'" },
    { "allow udp any dns=.com", 1, 19, "empty label" },
    { "allow udp any dns=exa$mple.com", 1, 22, "invalid character in DNS name" },
    { long_label, 1, 19, "label over 63 characters" },
    { NULL, 1, 19, "is over 253 characters" },
    { "allow udp any dns=a.com dns=b.com", 1, 25, "a second 'dns=' in one rule" },
    { "allow tcp any exe=usr/bin/curl", 1, 19, "the executable must be an absolute path" },
    { "allow tcp any exe=", 1, 19, "the executable must be an absolute path" },
    { "allow tcp any exe=/", 1, 19, "must be a normalised path" },
    { "allow tcp any exe=/usr/bin/../bin/curl", 1, 19, "must be a normalised path" },
    { "allow tcp any exe=/usr/./bin/curl", 1, 19, "must be a normalised path" },
    { "allow tcp any exe=/usr//bin/curl", 1, 19, "must be a normalised path" },
    { "allow tcp any exe=/usr/bin/", 1, 19, "must be a normalised path" },
    { "allow tcp any exe=/usr/bin/..", 1, 19, "must be a normalised path" },
    { "allow tcp any exe=/a exe=/b", 1, 22, "a second 'exe=' in one rule" },
    { "allow tcp any to 10.0.0.0/8", 1, 15,
      "unexpected 'to': expected 'port', 'dns=', 'host=' or 'exe='" },
    { "allow tcp any host=", 1, 20, "empty DNS name in 'host='" },
    { "allow tcp any host=.", 1, 20, "empty DNS name" },
    { "allow tcp any host=*", 1, 20, "misplaced '*' in 'host=*'" },
    { "allow tcp any host=pypi.*", 1, 25, "misplaced '*'" },
    { "allow tcp any host=pypi..org", 1, 25, "empty label in DNS name 'host=pypi..org'" },
    { "allow tcp any host=pypi.org:443", 1, 28, "invalid character in DNS name 'host=pypi.org:443'" },
    { "allow tcp any host=2001:db8::1", 1, 24, "invalid character in DNS name" },
    { "allow tcp any host=198.18.0.1", 1, 20,
      "'host=198.18.0.1' names an address, not a host: write the address as the rule's "
      "destination" },
    { "allow tcp any host=*.10", 1, 20, "names an address, not a host" },
    { "allow tcp any host=42.", 1, 20, "names an address, not a host" },
    { "allow tcp any host=a.org host=b.org", 1, 26, "a second 'host=' in one rule" },
    { "allow tcp any Host=a.org", 1, 15, "unexpected 'Host=a.org'" },
    { "allow tcp any 443", 1, 15, "unexpected '443'" },
    { "allow tcp\x0b" "any", 1, 10, "control character 0x0b" },
    { "allow tcp any\x7f", 1, 14, "control character 0x7f" },
    /* Lines and columns: comments, blanks, tabs (one byte, one column),
     * CRLF, the first bad line wins. */
    { "# comment\n\nallow tcp any port 443\n  allow   udp   bogus\nallow x", 4, 17,
      "invalid destination 'bogus'" },
    { "\tallow tcp nope", 1, 12, "invalid destination 'nope'" },
    { "allow tcp any\r\nallow tcp x\r\n", 2, 11, "invalid destination 'x'" },
    { "allow tcp any\n\n\n\nallow udp any port 1 dns=*", 5, 26, "misplaced '*'" },
  };

  while (name->len < 18 + 254)
    g_string_append (name, "abcdefghi.");
  g_string_append (name, "com");
  long_name = g_string_free (g_steal_pointer (&name), FALSE);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    if (cases[i].text == NULL)
      cases[i].text = long_name;

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AirlockPolicy) policy = airlock_policy_new_default ();
      g_autoptr(AirlockPolicy) parsed = NULL;
      g_autofree char *prefix = g_strdup_printf (NAME ":%u:%u: ", cases[i].line, cases[i].column);

      g_test_message ("case %" G_GSIZE_FORMAT ": %s", i, cases[i].text);
      parsed = airlock_policy_parse (cases[i].text, strlen (cases[i].text), NAME, &error);
      g_assert_null (parsed);
      g_assert_error (error, AIRLOCK_POLICY_ERROR, AIRLOCK_POLICY_ERROR_PARSE);
      g_assert_true (g_str_has_prefix (error->message, prefix));
      g_assert_nonnull (strstr (error->message + strlen (prefix), cases[i].reason));
      g_clear_error (&error);

      /* append fails the same way and leaves the policy as it was. */
      g_assert_false (airlock_policy_append (policy, cases[i].text, strlen (cases[i].text), NAME,
                                             &error));
      g_assert_error (error, AIRLOCK_POLICY_ERROR, AIRLOCK_POLICY_ERROR_PARSE);
      g_assert_true (g_str_has_prefix (error->message, prefix));
      g_assert_cmpuint (airlock_policy_get_n_rules (policy), ==, 0);
    }
}

static void
test_parse_error_nul_byte (void)
{
  static const char text[] = "allow tcp any\nallow tcp\0any";
  g_autoptr(GError) error = NULL;
  g_autoptr(AirlockPolicy) policy = airlock_policy_parse (text, sizeof text - 1, NAME, &error);

  g_assert_null (policy);
  g_assert_error (error, AIRLOCK_POLICY_ERROR, AIRLOCK_POLICY_ERROR_PARSE);
  g_assert_true (g_str_has_prefix (error->message, NAME ":2:10: control character 0x00"));
}

static void
test_parse_error_not_utf8 (void)
{
  /* An exe= path is bytes; the message quoting it stays valid UTF-8. */
  static const char text[] = "allow tcp any exe=rel\xff";
  g_autoptr(GError) error = NULL;
  g_autoptr(AirlockPolicy) policy = airlock_policy_parse (text, sizeof text - 1, NAME, &error);

  g_assert_null (policy);
  g_assert_error (error, AIRLOCK_POLICY_ERROR, AIRLOCK_POLICY_ERROR_PARSE);
  g_assert_true (g_str_has_prefix (error->message, NAME ":1:19: "));
  g_assert_true (g_utf8_validate (error->message, -1, NULL));
}

static void
test_parse_too_large (void)
{
  gsize len = AIRLOCK_POLICY_TEXT_MAX + 1;
  g_autofree char *text = g_malloc (len);
  g_autoptr(GError) error = NULL;
  g_autoptr(AirlockPolicy) policy = NULL;

  memset (text, '\n', len);
  policy = airlock_policy_parse (text, len, NAME, &error);
  g_assert_null (policy);
  g_assert_error (error, AIRLOCK_POLICY_ERROR, AIRLOCK_POLICY_ERROR_TOO_LARGE);
}

/* ---- load ---- */

static void
test_load_file (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("airlock-policy-XXXXXX", &error);
  g_autofree char *good = NULL;
  g_autofree char *bad = NULL;
  g_autofree char *missing = NULL;
  g_autofree char *expected = NULL;
  g_autoptr(AirlockPolicy) policy = NULL;
  const char *rule = NULL;

  g_assert_no_error (error);
  good = g_build_filename (dir, "good.policy", NULL);
  bad = g_build_filename (dir, "bad.policy", NULL);
  missing = g_build_filename (dir, "missing.policy", NULL);
  g_assert_true (g_file_set_contents (good, "# resolver\nallow udp 10.0.2.3 port 53\n", -1, NULL));
  g_assert_true (g_file_set_contents (bad, "allow udp 10.0.2.3 port 53\nallow udp 10.0.2.3/8\n", -1,
                                      NULL));

  policy = airlock_policy_load (good, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (airlock_policy_get_n_rules (policy), ==, 1);
  g_assert_true (admits_full (policy, IPPROTO_UDP, "10.0.2.3", 53, NULL, NULL, &rule));
  g_assert_cmpstr (rule, ==, "allow udp 10.0.2.3 port 53");

  /* Errors name the file by its path. */
  g_assert_null (airlock_policy_load (bad, &error));
  g_assert_error (error, AIRLOCK_POLICY_ERROR, AIRLOCK_POLICY_ERROR_PARSE);
  expected = g_strdup_printf ("%s:2:11: '10.0.2.3/8' has bits set", bad);
  g_assert_true (g_str_has_prefix (error->message, expected));
  g_clear_error (&error);

  g_assert_null (airlock_policy_load (missing, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  g_assert_nonnull (strstr (error->message, missing));

  g_assert_cmpint (g_unlink (good), ==, 0);
  g_assert_cmpint (g_unlink (bad), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

static void
test_append (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AirlockPolicy) policy = parse_ok ("allow tcp 192.0.2.0/24 port 443");
  const char *bad = "allow tcp any port 80\nallow tcp everywhere";
  const char *rule = NULL;

  g_assert_true (airlock_policy_append (policy, "allow tcp any port 443", 22, "--allow", &error));
  g_assert_no_error (error);
  g_assert_cmpuint (airlock_policy_get_n_rules (policy), ==, 2);
  /* The file's rule comes first. */
  g_assert_true (admits_full (policy, IPPROTO_TCP, "192.0.2.9", 443, NULL, NULL, &rule));
  g_assert_cmpstr (rule, ==, "allow tcp 192.0.2.0/24 port 443");
  g_assert_true (admits_full (policy, IPPROTO_TCP, "198.51.100.9", 443, NULL, NULL, &rule));
  g_assert_cmpstr (rule, ==, "allow tcp any port 443");

  g_assert_false (airlock_policy_append (policy, bad, strlen (bad), "--allow", &error));
  g_assert_true (g_str_has_prefix (error->message, "--allow:2:11: "));
  /* Nothing of the failed text was added, not even its good first line. */
  g_assert_cmpuint (airlock_policy_get_n_rules (policy), ==, 2);
  g_assert_false (admits (policy, IPPROTO_TCP, "198.51.100.9", 80));
}

/* ---- CIDR ---- */

static const AdmitCase cidr_zero_cases[] = {
  { "allow tcp 0.0.0.0/0", IPPROTO_TCP, "0.0.0.0", 1, TRUE },
  { "allow tcp 0.0.0.0/0", IPPROTO_TCP, "255.255.255.255", 1, TRUE },
  { "allow tcp 0.0.0.0/0", IPPROTO_TCP, "::ffff:8.8.8.8", 1, TRUE },
  { "allow tcp 0.0.0.0/0", IPPROTO_TCP, "2001:db8::1", 1, FALSE },
  { "allow tcp 0.0.0.0/0", IPPROTO_TCP, "::", 1, FALSE },

  { "allow tcp ::/0", IPPROTO_TCP, "::", 1, TRUE },
  { "allow tcp ::/0", IPPROTO_TCP, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 1, TRUE },
  { "allow tcp ::/0", IPPROTO_TCP, "::1", 1, TRUE },
  { "allow tcp ::/0", IPPROTO_TCP, "8.8.8.8", 1, FALSE },
  /* A v4-mapped destination is IPv4: ::/0 does not cover it. */
  { "allow tcp ::/0", IPPROTO_TCP, "::ffff:8.8.8.8", 1, FALSE },
};

static const AdmitCase cidr_host_cases[] = {
  { "allow tcp 192.0.2.7/32", IPPROTO_TCP, "192.0.2.7", 80, TRUE },
  { "allow tcp 192.0.2.7/32", IPPROTO_TCP, "192.0.2.6", 80, FALSE },
  { "allow tcp 192.0.2.7/32", IPPROTO_TCP, "192.0.2.8", 80, FALSE },
  { "allow tcp 192.0.2.7/32", IPPROTO_TCP, "193.0.2.7", 80, FALSE },
  { "allow tcp 2001:db8::7/128", IPPROTO_TCP, "2001:db8::7", 80, TRUE },
  { "allow tcp 2001:db8::7/128", IPPROTO_TCP, "2001:db8::6", 80, FALSE },
  { "allow tcp 2001:db8::7/128", IPPROTO_TCP, "2001:db8::8", 80, FALSE },
  { "allow tcp 2001:db8::7/128", IPPROTO_TCP, "2001:db9::7", 80, FALSE },
  { "allow tcp 192.0.2.7", IPPROTO_TCP, "192.0.2.7", 80, TRUE },
  { "allow tcp 192.0.2.7", IPPROTO_TCP, "192.0.2.6", 80, FALSE },
  { "allow tcp 192.0.2.7", IPPROTO_TCP, "192.0.2.8", 80, FALSE },
  { "allow tcp 192.0.2.7", IPPROTO_TCP, "193.0.2.7", 80, FALSE },
  { "allow tcp 2001:db8::7", IPPROTO_TCP, "2001:db8::7", 80, TRUE },
  { "allow tcp 2001:db8::7", IPPROTO_TCP, "2001:db8::6", 80, FALSE },
  { "allow tcp 2001:db8::7", IPPROTO_TCP, "2001:db8::8", 80, FALSE },
  { "allow tcp 2001:db8::7", IPPROTO_TCP, "2001:db9::7", 80, FALSE },
};

static const AdmitCase cidr_boundaries_cases[] = {
  { "allow tcp 10.0.0.0/8", IPPROTO_TCP, "10.0.0.0", 1, TRUE },
  { "allow tcp 10.0.0.0/8", IPPROTO_TCP, "10.255.255.255", 1, TRUE },
  { "allow tcp 10.0.0.0/8", IPPROTO_TCP, "9.255.255.255", 1, FALSE },
  { "allow tcp 10.0.0.0/8", IPPROTO_TCP, "11.0.0.0", 1, FALSE },

  { "allow tcp 192.0.2.6/31", IPPROTO_TCP, "192.0.2.6", 1, TRUE },
  { "allow tcp 192.0.2.6/31", IPPROTO_TCP, "192.0.2.7", 1, TRUE },
  { "allow tcp 192.0.2.6/31", IPPROTO_TCP, "192.0.2.5", 1, FALSE },
  { "allow tcp 192.0.2.6/31", IPPROTO_TCP, "192.0.2.8", 1, FALSE },

  { "allow tcp 128.0.0.0/1", IPPROTO_TCP, "128.0.0.0", 1, TRUE },
  { "allow tcp 128.0.0.0/1", IPPROTO_TCP, "255.255.255.255", 1, TRUE },
  { "allow tcp 128.0.0.0/1", IPPROTO_TCP, "127.255.255.255", 1, FALSE },

  { "allow tcp 172.16.0.0/12", IPPROTO_TCP, "172.16.0.0", 1, TRUE },
  { "allow tcp 172.16.0.0/12", IPPROTO_TCP, "172.31.255.255", 1, TRUE },
  { "allow tcp 172.16.0.0/12", IPPROTO_TCP, "172.32.0.0", 1, FALSE },
  { "allow tcp 172.16.0.0/12", IPPROTO_TCP, "172.15.255.255", 1, FALSE },

  { "allow tcp 2001:db8::/32", IPPROTO_TCP, "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", 1, TRUE },
  { "allow tcp 2001:db8::/32", IPPROTO_TCP, "2001:db9::", 1, FALSE },
  { "allow tcp 2001:db8::/32", IPPROTO_TCP, "2001:db7:ffff::", 1, FALSE },

  { "allow tcp 2001:db8:0:0:8000::/65", IPPROTO_TCP, "2001:db8::8000:0:0:0", 1, TRUE },
  { "allow tcp 2001:db8:0:0:8000::/65", IPPROTO_TCP, "2001:db8::ffff:ffff:ffff:ffff", 1, TRUE },
  { "allow tcp 2001:db8:0:0:8000::/65", IPPROTO_TCP, "2001:db8::7fff:ffff:ffff:ffff", 1, FALSE },

  { "allow tcp 2001:db8::/127", IPPROTO_TCP, "2001:db8::", 1, TRUE },
  { "allow tcp 2001:db8::/127", IPPROTO_TCP, "2001:db8::1", 1, TRUE },
  { "allow tcp 2001:db8::/127", IPPROTO_TCP, "2001:db8::2", 1, FALSE },
};

static const AdmitCase any_destination_cases[] = {
  { "allow udp any", IPPROTO_UDP, "0.0.0.0", 9, TRUE },
  { "allow udp any", IPPROTO_UDP, "::", 9, TRUE },
  { "allow udp any", IPPROTO_UDP, "::ffff:1.2.3.4", 9, TRUE },
  { "allow udp any", IPPROTO_UDP, "2001:db8::1", 9, TRUE },
  { "allow udp any", IPPROTO_TCP, "2001:db8::1", 9, FALSE },
};

static void
test_unknown_family (void)
{
  g_autoptr(AirlockPolicy) policy = parse_ok ("allow any any");
  static const guint8 address[16] = { 0 };

  g_assert_true (airlock_policy_admits (policy, AF_INET, IPPROTO_TCP, address, 1, NULL, NULL, NULL));
  g_assert_false (airlock_policy_admits (policy, AF_UNIX, IPPROTO_TCP, address, 1, NULL, NULL, NULL));
  g_assert_false (airlock_policy_admits (policy, AF_PACKET, 0, address, 1, NULL, NULL, NULL));
}

/* ---- ports and protocols ---- */

static const AdmitCase ports_cases[] = {
  { "allow tcp any port 443", IPPROTO_TCP, "192.0.2.1", 443, TRUE },
  { "allow tcp any port 443", IPPROTO_TCP, "192.0.2.1", 442, FALSE },
  { "allow tcp any port 443", IPPROTO_TCP, "192.0.2.1", 444, FALSE },

  { "allow udp any port 80-89", IPPROTO_UDP, "192.0.2.1", 80, TRUE },
  { "allow udp any port 80-89", IPPROTO_UDP, "192.0.2.1", 85, TRUE },
  { "allow udp any port 80-89", IPPROTO_UDP, "192.0.2.1", 89, TRUE },
  { "allow udp any port 80-89", IPPROTO_UDP, "192.0.2.1", 79, FALSE },
  { "allow udp any port 80-89", IPPROTO_UDP, "192.0.2.1", 90, FALSE },

  { "allow tcp any port 0\nallow tcp any port 65535", IPPROTO_TCP, "192.0.2.1", 0, TRUE },
  { "allow tcp any port 0\nallow tcp any port 65535", IPPROTO_TCP, "192.0.2.1", 65535, TRUE },
  { "allow tcp any port 0\nallow tcp any port 65535", IPPROTO_TCP, "192.0.2.1", 1, FALSE },
  { "allow tcp any port 0\nallow tcp any port 65535", IPPROTO_TCP, "192.0.2.1", 65534, FALSE },

  { "allow tcp any port 8080-8080", IPPROTO_TCP, "192.0.2.1", 8080, TRUE },
  { "allow tcp any port 8080-8080", IPPROTO_TCP, "192.0.2.1", 8081, FALSE },

  /* No port clause: every port. */
  { "allow tcp 192.0.2.1", IPPROTO_TCP, "192.0.2.1", 0, TRUE },
  { "allow tcp 192.0.2.1", IPPROTO_TCP, "192.0.2.1", 65535, TRUE },
};

static const AdmitCase protocols_cases[] = {
  { "allow tcp any", IPPROTO_TCP, "192.0.2.7", 80, TRUE },
  { "allow tcp any", IPPROTO_UDP, "192.0.2.7", 80, FALSE },
  { "allow tcp any", IPPROTO_ICMP, "192.0.2.7", 0, FALSE },

  /* any: every protocol, even ones without a keyword (SCTP). */
  { "allow any 192.0.2.7", IPPROTO_TCP, "192.0.2.7", 80, TRUE },
  { "allow any 192.0.2.7", IPPROTO_UDP, "192.0.2.7", 53, TRUE },
  { "allow any 192.0.2.7", IPPROTO_ICMP, "192.0.2.7", 0, TRUE },
  { "allow any 192.0.2.7", 132, "192.0.2.7", 0, TRUE },
  { "allow any 192.0.2.7", IPPROTO_TCP, "192.0.2.8", 80, FALSE },

  /* A port clause under any: TCP and UDP only, never ICMP (no ports),
   * whatever port value the caller passes with it. */
  { "allow any any port 53", IPPROTO_TCP, "192.0.2.7", 53, TRUE },
  { "allow any any port 53", IPPROTO_UDP, "2001:db8::1", 53, TRUE },
  { "allow any any port 53", IPPROTO_ICMP, "192.0.2.7", 53, FALSE },
  { "allow any any port 53", IPPROTO_ICMPV6, "2001:db8::1", 53, FALSE },
  { "allow any any port 53", 132, "192.0.2.7", 53, FALSE },

  /* ICMP rules ignore the port argument. */
  { "allow icmp 192.0.2.0/24", IPPROTO_ICMP, "192.0.2.1", 0, TRUE },
  { "allow icmp 192.0.2.0/24", IPPROTO_ICMP, "192.0.2.1", 1234, TRUE },
  { "allow icmp 192.0.2.0/24", IPPROTO_ICMPV6, "192.0.2.1", 0, FALSE },
  { "allow icmp 192.0.2.0/24", IPPROTO_ICMP, "192.0.3.1", 0, FALSE },
  { "allow icmpv6 any", IPPROTO_ICMPV6, "2001:db8::1", 0, TRUE },
  { "allow icmpv6 any", IPPROTO_ICMP, "192.0.2.1", 0, FALSE },
};

/* ---- v4-mapped ---- */

static void
test_v4_mapped (void)
{
  g_autoptr(AirlockPolicy) policy = parse_ok ("allow tcp 10.0.0.0/8 port 443");
  g_autoptr(AirlockPolicy) v6 = parse_ok ("allow tcp ::/80");
  const char *rule = NULL;

  g_assert_true (admits_full (policy, IPPROTO_TCP, "::ffff:10.1.2.3", 443, NULL, NULL, &rule));
  g_assert_cmpstr (rule, ==, "allow tcp 10.0.0.0/8 port 443");
  g_assert_false (admits (policy, IPPROTO_TCP, "::ffff:11.1.2.3", 443));
  g_assert_false (admits (policy, IPPROTO_TCP, "::ffff:10.1.2.3", 80));
  /* Only ::ffff:0:0/96 is v4-mapped: the IPv4-compatible ::a.b.c.d and
   * the translated ::ffff:0:a.b.c.d are IPv6. */
  g_assert_false (admits (policy, IPPROTO_TCP, "::10.1.2.3", 443));
  g_assert_false (admits (policy, IPPROTO_TCP, "::ffff:0:10.1.2.3", 443));
  g_assert_true (admits (v6, IPPROTO_TCP, "::10.1.2.3", 1));
  g_assert_true (admits (v6, IPPROTO_TCP, "::1", 1));
  g_assert_false (admits (v6, IPPROTO_TCP, "::ffff:10.1.2.3", 1));
}

/* ---- DNS names ---- */

static gboolean
admits_names (const AirlockPolicy *policy, const char *const *names)
{
  return admits_full (policy, IPPROTO_UDP, "10.0.2.3", 53, names, NULL, NULL);
}

static void
test_dns_exact (void)
{
  g_autoptr(AirlockPolicy) policy = parse_ok ("allow udp any port 53 dns=Example.COM");
  g_autoptr(AirlockPolicy) dotted = parse_ok ("allow udp any port 53 dns=example.com.");

  for (int i = 0; i < 2; i++)
    {
      AirlockPolicy *p = i == 0 ? policy : dotted;

      g_assert_true (admits_names (p, (const char *[]) { "example.com", NULL }));
      g_assert_true (admits_names (p, (const char *[]) { "example.com.", NULL }));
      g_assert_true (admits_names (p, (const char *[]) { "EXAMPLE.com.", NULL }));
      g_assert_false (admits_names (p, (const char *[]) { "www.example.com", NULL }));
      g_assert_false (admits_names (p, (const char *[]) { "example.co", NULL }));
      g_assert_false (admits_names (p, (const char *[]) { "example.com..", NULL }));
      g_assert_false (admits_names (p, (const char *[]) { "xexample.com", NULL }));
      g_assert_false (admits_names (p, (const char *[]) { ".", NULL }));
      g_assert_false (admits_names (p, (const char *[]) { "", NULL }));
      /* No names: a dns= rule never admits. */
      g_assert_false (admits_names (p, (const char *[]) { NULL }));
      g_assert_false (admits_names (p, NULL));
    }
}

static void
test_dns_wildcard (void)
{
  g_autoptr(AirlockPolicy) policy = parse_ok ("allow udp any port 53 dns=*.example.com");

  g_assert_true (admits_names (policy, (const char *[]) { "www.example.com", NULL }));
  g_assert_true (admits_names (policy, (const char *[]) { "a.b.c.example.com.", NULL }));
  g_assert_true (admits_names (policy, (const char *[]) { "WWW.EXAMPLE.COM", NULL }));
  g_assert_true (admits_names (policy, (const char *[]) { "_dmarc.example.com", NULL }));
  /* Not the apex, not a suffix of a label, not another domain. */
  g_assert_false (admits_names (policy, (const char *[]) { "example.com", NULL }));
  g_assert_false (admits_names (policy, (const char *[]) { "example.com.", NULL }));
  g_assert_false (admits_names (policy, (const char *[]) { "notexample.com", NULL }));
  g_assert_false (admits_names (policy, (const char *[]) { "www.example.com.evil", NULL }));
  g_assert_false (admits_names (policy, (const char *[]) { ".example.com", NULL }));
  g_assert_false (admits_names (policy, (const char *[]) { "a..example.com", NULL }));
  /* An escaped dot is inside a label: "x\.example.com" is "x.example"
   * under com.  Any escaped or unprintable byte never matches. */
  g_assert_false (admits_names (policy, (const char *[]) { "x\\.example.com", NULL }));
  g_assert_false (admits_names (policy, (const char *[]) { "a\\.b.example.com", NULL }));
  g_assert_false (admits_names (policy, (const char *[]) { "a\\000.example.com", NULL }));
  g_assert_false (admits_names (policy, (const char *[]) { "a b.example.com", NULL }));
  g_assert_false (admits_names (policy, (const char *[]) { "a\x01.example.com", NULL }));
  g_assert_false (admits_names (policy, (const char *[]) { "\xc3\xa9.example.com", NULL }));
}

static void
test_dns_every_name (void)
{
  g_autoptr(AirlockPolicy) policy = parse_ok ("allow udp any port 53 dns=*.example.com\n"
                                              "allow udp any port 53 dns=other.org");

  g_assert_true (admits_names (policy, (const char *[]) { "a.example.com", "b.example.com", NULL }));
  /* One rule must cover every name of the attempt: an allowed question
   * does not carry another one. */
  g_assert_false (admits_names (policy, (const char *[]) { "a.example.com", "evil.net", NULL }));
  g_assert_false (admits_names (policy, (const char *[]) { "a.example.com", "other.org", NULL }));
  g_assert_true (admits_names (policy, (const char *[]) { "other.org", "OTHER.org.", NULL }));
}

static void
test_dns_with_network (void)
{
  g_autoptr(AirlockPolicy) policy = parse_ok ("allow tcp 198.51.100.0/24 port 443 dns=example.com");
  const char *names[] = { "example.com", NULL };

  g_assert_true (admits_full (policy, IPPROTO_TCP, "198.51.100.80", 443, names, NULL, NULL));
  g_assert_false (admits_full (policy, IPPROTO_TCP, "198.51.101.80", 443, names, NULL, NULL));
  g_assert_false (admits_full (policy, IPPROTO_TCP, "198.51.100.80", 80, names, NULL, NULL));
  g_assert_false (admits_full (policy, IPPROTO_TCP, "198.51.100.80", 443, NULL, NULL, NULL));
}

/* ---- host names ---- */

static gboolean
admits_host (const AirlockPolicy *policy, const char *host)
{
  return admits_attempt (policy, IPPROTO_TCP, "198.18.3.7", 443, NULL, NULL, host, NULL);
}

static void
test_host_exact (void)
{
  g_autoptr(AirlockPolicy) policy = parse_ok ("allow tcp any port 443 host=PyPI.org");
  g_autoptr(AirlockPolicy) dotted = parse_ok ("allow tcp any port 443 host=pypi.org.");

  for (int i = 0; i < 2; i++)
    {
      AirlockPolicy *p = i == 0 ? policy : dotted;

      /* Case and a trailing dot do not matter, on either side: the
       * sinkhole's names are in presentation form, "pypi.org.". */
      g_assert_true (admits_host (p, "pypi.org."));
      g_assert_true (admits_host (p, "pypi.org"));
      g_assert_true (admits_host (p, "PYPI.ORG."));
      g_assert_false (admits_host (p, "files.pypi.org."));
      g_assert_false (admits_host (p, "pypi.org.evil."));
      g_assert_false (admits_host (p, "xpypi.org."));
      g_assert_false (admits_host (p, "pypi.org.."));
      g_assert_false (admits_host (p, "pypi\\.org."));
      g_assert_false (admits_host (p, ""));
      /* No name was handed out for the address: never admitted. */
      g_assert_false (admits_host (p, NULL));
      /* The port and protocol still hold. */
      g_assert_false (admits_attempt (p, IPPROTO_TCP, "198.18.3.7", 80, NULL, NULL, "pypi.org.",
                                      NULL));
      g_assert_false (admits_attempt (p, IPPROTO_UDP, "198.18.3.7", 443, NULL, NULL, "pypi.org.",
                                      NULL));
    }
}

static void
test_host_wildcard (void)
{
  g_autoptr(AirlockPolicy) sub = parse_ok ("allow tcp any port 443 host=*.pythonhosted.org");
  g_autoptr(AirlockPolicy) both = parse_ok ("allow tcp any port 443 host=*.pythonhosted.org\n"
                                            "allow tcp any port 443 host=pythonhosted.org\n");

  g_assert_true (admits_host (sub, "files.pythonhosted.org."));
  g_assert_true (admits_host (sub, "a.b.PythonHosted.org"));
  /* Not the apex: that takes a rule of its own. */
  g_assert_false (admits_host (sub, "pythonhosted.org."));
  g_assert_false (admits_host (sub, "evilpythonhosted.org."));
  g_assert_false (admits_host (sub, "files.pythonhosted.org.evil."));
  g_assert_false (admits_host (sub, "x\\.pythonhosted.org."));
  g_assert_true (admits_host (both, "pythonhosted.org."));
  g_assert_true (admits_host (both, "files.pythonhosted.org."));
}

/* airlock_policy_admits() has no host name: a host= rule never admits
 * through it, whatever else matches. */
static void
test_host_needs_a_name (void)
{
  g_autoptr(AirlockPolicy) policy = parse_ok ("allow any any host=pypi.org");
  const char *names[] = { "pypi.org", NULL };

  g_assert_false (admits_full (policy, IPPROTO_TCP, "198.18.3.7", 443, names, NULL, NULL));
  g_assert_true (admits_attempt (policy, IPPROTO_TCP, "198.18.3.7", 443, NULL, NULL, "pypi.org",
                                 NULL));
  /* A dns= name is what a query asks, not where a connection goes. */
  g_assert_false (admits_attempt (policy, IPPROTO_TCP, "198.18.3.7", 443, names, NULL, NULL,
                                  NULL));
}

/* Every clause of a rule holds together: host= narrows, it does not widen. */
static void
test_host_with_other_clauses (void)
{
  g_autoptr(AirlockPolicy) policy =
    parse_ok ("allow tcp 198.18.0.0/15 port 443 host=pypi.org exe=/usr/bin/pip\n"
              "allow udp any port 53 dns=pypi.org host=resolver.test\n");
  const char *names[] = { "pypi.org.", NULL };
  const char *rule = NULL;

  g_assert_true (admits_attempt (policy, IPPROTO_TCP, "198.18.3.7", 443, NULL, "/usr/bin/pip",
                                 "pypi.org.", &rule));
  g_assert_cmpstr (rule, ==, "allow tcp 198.18.0.0/15 port 443 host=pypi.org exe=/usr/bin/pip");
  /* A v4-mapped destination is judged as its IPv4 address, host and all. */
  g_assert_true (admits_attempt (policy, IPPROTO_TCP, "::ffff:198.18.3.7", 443, NULL,
                                 "/usr/bin/pip", "pypi.org.", NULL));
  g_assert_false (admits_attempt (policy, IPPROTO_TCP, "2001:db8:a1::37", 443, NULL,
                                  "/usr/bin/pip", "pypi.org.", NULL));
  g_assert_false (admits_attempt (policy, IPPROTO_TCP, "198.18.3.7", 443, NULL, "/usr/bin/curl",
                                  "pypi.org.", NULL));
  g_assert_false (admits_attempt (policy, IPPROTO_TCP, "198.18.3.7", 443, NULL, NULL,
                                  "pypi.org.", NULL));
  g_assert_true (admits_attempt (policy, IPPROTO_UDP, "10.0.2.3", 53, names, NULL,
                                 "resolver.test.", NULL));
  g_assert_false (admits_attempt (policy, IPPROTO_UDP, "10.0.2.3", 53, names, NULL, NULL, NULL));
  g_assert_false (admits_attempt (policy, IPPROTO_UDP, "10.0.2.3", 53, NULL, NULL,
                                  "resolver.test.", NULL));
}

/* The example: the lookup and the connection it leads to, each by
 * its own rule; an address rule admits whatever the host name. */
static void
test_host_example (void)
{
  g_autoptr(AirlockPolicy) policy = parse_ok ("allow udp any port 53 dns=pypi.org\n"
                                              "allow tcp any port 443 host=pypi.org\n"
                                              "allow tcp 198.51.100.0/24 port 443\n");
  const char *pypi[] = { "pypi.org.", NULL };
  const char *evil[] = { "evil.org.", NULL };
  const char *rule = NULL;

  g_assert_true (admits_attempt (policy, IPPROTO_UDP, "10.0.2.3", 53, pypi, NULL, NULL, &rule));
  g_assert_cmpstr (rule, ==, "allow udp any port 53 dns=pypi.org");
  g_assert_false (admits_attempt (policy, IPPROTO_UDP, "10.0.2.3", 53, evil, NULL, NULL, NULL));
  g_assert_true (admits_attempt (policy, IPPROTO_TCP, "2001:db8:a1::37", 443, NULL, NULL,
                                 "pypi.org.", &rule));
  g_assert_cmpstr (rule, ==, "allow tcp any port 443 host=pypi.org");
  g_assert_false (admits_attempt (policy, IPPROTO_TCP, "198.18.9.9", 443, NULL, NULL,
                                  "evil.org.", NULL));
  g_assert_true (admits_attempt (policy, IPPROTO_TCP, "198.51.100.7", 443, NULL, NULL,
                                 "evil.org.", &rule));
  g_assert_cmpstr (rule, ==, "allow tcp 198.51.100.0/24 port 443");
}

/* ---- exe ---- */

static void
test_exe (void)
{
  g_autoptr(AirlockPolicy) policy = parse_ok ("allow tcp any port 80-89 exe=/usr/bin/curl");

  g_assert_true (admits_full (policy, IPPROTO_TCP, "192.0.2.1", 80, NULL, "/usr/bin/curl", NULL));
  g_assert_false (admits_full (policy, IPPROTO_TCP, "192.0.2.1", 80, NULL, NULL, NULL));
  g_assert_false (admits_full (policy, IPPROTO_TCP, "192.0.2.1", 80, NULL, "/usr/bin/wget", NULL));
  g_assert_false (admits_full (policy, IPPROTO_TCP, "192.0.2.1", 80, NULL, "/usr/bin/curl2", NULL));
  g_assert_false (admits_full (policy, IPPROTO_TCP, "192.0.2.1", 80, NULL, "/usr/bin/cur", NULL));
  g_assert_false (admits_full (policy, IPPROTO_TCP, "192.0.2.1", 80, NULL, "/bin/curl", NULL));
  g_assert_false (admits_full (policy, IPPROTO_TCP, "192.0.2.1", 80, NULL, "/USR/BIN/CURL", NULL));
  g_assert_false (admits_full (policy, IPPROTO_TCP, "192.0.2.1", 80, NULL, "curl", NULL));
  g_assert_false (admits_full (policy, IPPROTO_TCP, "192.0.2.1", 90, NULL, "/usr/bin/curl", NULL));
}

static void
test_exe_and_dns (void)
{
  g_autoptr(AirlockPolicy) policy = parse_ok ("allow udp any port 53 dns=*.example.com exe=/bin/probe");
  const char *names[] = { "www.example.com", NULL };
  const char *other[] = { "www.example.org", NULL };

  g_assert_true (admits_full (policy, IPPROTO_UDP, "10.0.2.3", 53, names, "/bin/probe", NULL));
  g_assert_false (admits_full (policy, IPPROTO_UDP, "10.0.2.3", 53, other, "/bin/probe", NULL));
  g_assert_false (admits_full (policy, IPPROTO_UDP, "10.0.2.3", 53, names, "/bin/sh", NULL));
}

/* ---- reporting ---- */

static void
test_first_match_reported (void)
{
  g_autoptr(AirlockPolicy) policy = parse_ok ("allow tcp 192.0.2.0/24 port 22\n"
                                              "allow tcp 192.0.2.0/24 port 443 exe=/bin/a\n"
                                              "allow tcp 192.0.2.7 port 443\n"
                                              "allow tcp 192.0.2.0/24\n"
                                              "allow any any\n");
  const char *rule = NULL;

  g_assert_true (admits_full (policy, IPPROTO_TCP, "192.0.2.7", 443, NULL, "/bin/a", &rule));
  g_assert_cmpstr (rule, ==, "allow tcp 192.0.2.0/24 port 443 exe=/bin/a");
  g_assert_true (admits_full (policy, IPPROTO_TCP, "192.0.2.7", 443, NULL, "/bin/b", &rule));
  g_assert_cmpstr (rule, ==, "allow tcp 192.0.2.7 port 443");
  g_assert_true (admits_full (policy, IPPROTO_TCP, "192.0.2.8", 443, NULL, NULL, &rule));
  g_assert_cmpstr (rule, ==, "allow tcp 192.0.2.0/24");
  g_assert_true (admits_full (policy, IPPROTO_TCP, "192.0.2.8", 22, NULL, NULL, &rule));
  g_assert_cmpstr (rule, ==, "allow tcp 192.0.2.0/24 port 22");
  g_assert_true (admits_full (policy, IPPROTO_UDP, "2001:db8::1", 9, NULL, NULL, &rule));
  g_assert_cmpstr (rule, ==, "allow any any");
  /* ret_rule may be NULL. */
  g_assert_true (admits_full (policy, IPPROTO_UDP, "2001:db8::1", 9, NULL, NULL, NULL));
}

/* The policy's one comparison of names, which the verdict and `policy
 * suggest` use: case and one trailing dot aside, nothing else. */
static void
test_same_name (void)
{
  g_assert_true (airlock_policy_same_name ("example.com", "example.com"));
  g_assert_true (airlock_policy_same_name ("Example.COM.", "example.com"));
  g_assert_true (airlock_policy_same_name ("example.com", "EXAMPLE.com."));
  g_assert_true (airlock_policy_same_name (".", ""));
  g_assert_false (airlock_policy_same_name ("example.com..", "example.com"));
  g_assert_false (airlock_policy_same_name ("example.co", "example.com"));
  g_assert_false (airlock_policy_same_name ("www.example.com", "example.com"));
  g_assert_false (airlock_policy_same_name ("exampl\xc3\xa9.com", "EXAMPL\xc3\x89.com"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/policy/default/admits-nothing", test_default_admits_nothing);
  g_test_add_func ("/policy/default/empty-text", test_empty_text_is_default);
  g_test_add_func ("/policy/grammar/rule-kinds", test_grammar_rule_kinds);
  g_test_add_func ("/policy/grammar/comments-and-blanks", test_trailing_comment_and_blanks);
  g_test_add_func ("/policy/errors/line-column-reason", test_parse_errors);
  g_test_add_func ("/policy/errors/nul-byte", test_parse_error_nul_byte);
  g_test_add_func ("/policy/errors/not-utf8", test_parse_error_not_utf8);
  g_test_add_func ("/policy/errors/too-large", test_parse_too_large);
  g_test_add_func ("/policy/load/file", test_load_file);
  g_test_add_func ("/policy/append/after-file", test_append);
  g_test_add_data_func ("/policy/cidr/zero", ADMIT_TABLE (cidr_zero_cases), test_admit_table);
  g_test_add_data_func ("/policy/cidr/host", ADMIT_TABLE (cidr_host_cases), test_admit_table);
  g_test_add_data_func ("/policy/cidr/boundaries", ADMIT_TABLE (cidr_boundaries_cases), test_admit_table);
  g_test_add_data_func ("/policy/cidr/any", ADMIT_TABLE (any_destination_cases), test_admit_table);
  g_test_add_func ("/policy/cidr/unknown-family", test_unknown_family);
  g_test_add_data_func ("/policy/ports/single-range-none", ADMIT_TABLE (ports_cases), test_admit_table);
  g_test_add_data_func ("/policy/protocol/any-and-icmp", ADMIT_TABLE (protocols_cases), test_admit_table);
  g_test_add_func ("/policy/v4-mapped/judged-as-ipv4", test_v4_mapped);
  g_test_add_func ("/policy/dns/exact", test_dns_exact);
  g_test_add_func ("/policy/dns/wildcard", test_dns_wildcard);
  g_test_add_func ("/policy/dns/every-name", test_dns_every_name);
  g_test_add_func ("/policy/dns/with-network", test_dns_with_network);
  g_test_add_func ("/policy/host/exact", test_host_exact);
  g_test_add_func ("/policy/host/wildcard", test_host_wildcard);
  g_test_add_func ("/policy/host/needs-a-name", test_host_needs_a_name);
  g_test_add_func ("/policy/host/with-other-clauses", test_host_with_other_clauses);
  g_test_add_func ("/policy/host/issue-example", test_host_example);
  g_test_add_func ("/policy/exe/exact-path", test_exe);
  g_test_add_func ("/policy/exe/with-dns", test_exe_and_dns);
  g_test_add_func ("/policy/report/first-match", test_first_match_reported);
  g_test_add_func ("/policy/names/same-name", test_same_name);

  return g_test_run ();
}

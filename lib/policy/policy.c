/* The egress allow-list (policy.h, docs/policy.md).
 *
 * The policy text is the user's, not the workload's, but the parser is
 * strict anyway: a rule that says less than its author meant admits
 * traffic that should fail the gate.  So nothing is guessed: a network
 * with bits set after its prefix, an IPv6 spelling of an IPv4 network, a
 * path that is not in the form the kernel reports, a wildcard anywhere
 * but the first label are errors naming the line and column, never
 * quietly rewritten. */
#include "config.h"

#include "policy/policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>

G_DEFINE_QUARK (airlock-policy-error-quark, airlock_policy_error)

#define PROTOCOL_ANY (-1)
/* RFC 1035 §2.3.4 in presentation form, without the trailing dot. */
#define DNS_NAME_TEXT_MAX 253
#define DNS_LABEL_MAX 63

typedef struct {
  char *text;          /* the rule as written: tokens joined by one space */
  int protocol;        /* IPPROTO_*, or PROTOCOL_ANY */
  gboolean any_address;
  int family;          /* AF_INET or AF_INET6, unless any_address */
  guint8 network[16];  /* network order; bits after @prefix are zero */
  guint prefix;
  gboolean has_ports;  /* FALSE: every port, and ICMP too */
  guint16 port_low, port_high;
  char *dns;           /* lower case, no trailing dot; "*.example.com" or exact */
  char *host;          /* the same form as @dns */
  char *exe;           /* absolute path, compared byte for byte */
} PolicyRule;

struct _AirlockPolicy {
  GPtrArray *rules;    /* PolicyRule *, in the order written */
};

static void
policy_rule_free (PolicyRule *rule)
{
  if (rule == NULL)
    return;
  g_free (rule->text);
  g_free (rule->dns);
  g_free (rule->host);
  g_free (rule->exe);
  g_free (rule);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PolicyRule, policy_rule_free)

AirlockPolicy *
airlock_policy_new_default (void)
{
  AirlockPolicy *policy = g_new0 (AirlockPolicy, 1);

  policy->rules = g_ptr_array_new_with_free_func ((GDestroyNotify) policy_rule_free);
  return policy;
}

void
airlock_policy_free (AirlockPolicy *policy)
{
  if (policy == NULL)
    return;
  g_ptr_array_unref (policy->rules);
  g_free (policy);
}

guint
airlock_policy_get_n_rules (const AirlockPolicy *policy)
{
  g_return_val_if_fail (policy != NULL, 0);
  return policy->rules->len;
}

char *
airlock_policy_to_text (const AirlockPolicy *policy)
{
  GString *out = g_string_new (NULL);

  g_return_val_if_fail (policy != NULL, NULL);
  for (guint i = 0; i < policy->rules->len; i++)
    {
      const PolicyRule *rule = policy->rules->pdata[i];

      g_string_append_printf (out, "%s\n", rule->text);
    }
  return g_string_free (out, FALSE);
}

/* ---- parsing ---- */

typedef struct {
  const char *start;
  gsize len;
  guint column;        /* 1-based byte column */
} Token;

typedef struct {
  const char *name;
  guint line;
  const Token *tokens;
  guint n_tokens;
  guint end_column;    /* just after the last token: where a missing one goes */
} RuleLine;

static gboolean parse_error (GError **error, const RuleLine *rl, guint column, const char *format, ...)
  G_GNUC_PRINTF (4, 5);

/* Always returns FALSE, so callers can `return parse_error (…)`. */
static gboolean
parse_error (GError **error, const RuleLine *rl, guint column, const char *format, ...)
{
  va_list args;
  g_autofree char *reason = NULL;

  va_start (args, format);
  reason = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, AIRLOCK_POLICY_ERROR, AIRLOCK_POLICY_ERROR_PARSE, "%s:%u:%u: %s", rl->name,
               rl->line, column, reason);
  return FALSE;
}

/* A token for a message: the bytes are the user's and may not be UTF-8
 * (an exe= path), and a GError message must be. */
static char *
token_text (const Token *token)
{
  return g_utf8_make_valid (token->start, (gssize) token->len);
}

static gboolean
token_is (const Token *token, const char *word)
{
  return token->len == strlen (word) && memcmp (token->start, word, token->len) == 0;
}

static gboolean
token_has_prefix (const Token *token, const char *prefix)
{
  gsize n = strlen (prefix);

  return token->len >= n && memcmp (token->start, prefix, n) == 0;
}

/* Digits only (no sign, no blank, no base prefix), at most @max_digits of
 * them, value at most @max. */
static gboolean
parse_decimal (const char *s, gsize len, guint max_digits, guint max, guint *ret)
{
  guint value = 0;

  if (len == 0 || len > max_digits)
    return FALSE;
  for (gsize i = 0; i < len; i++)
    {
      if (!g_ascii_isdigit (s[i]))
        return FALSE;
      value = value * 10 + (guint) (s[i] - '0');
    }
  if (value > max)
    return FALSE;
  *ret = value;
  return TRUE;
}

static gboolean
parse_protocol (const RuleLine *rl, const Token *token, PolicyRule *rule, GError **error)
{
  static const struct {
    const char *word;
    int protocol;
  } protocols[] = {
    { "tcp", IPPROTO_TCP },
    { "udp", IPPROTO_UDP },
    { "icmp", IPPROTO_ICMP },
    { "icmpv6", IPPROTO_ICMPV6 },
    { "any", PROTOCOL_ANY },
  };
  g_autofree char *text = NULL;

  for (gsize i = 0; i < G_N_ELEMENTS (protocols); i++)
    if (token_is (token, protocols[i].word))
      {
        rule->protocol = protocols[i].protocol;
        return TRUE;
      }
  text = token_text (token);
  return parse_error (error, rl, token->column,
                      "unknown protocol '%s': expected tcp, udp, icmp, icmpv6 or any", text);
}

static gboolean
address_is_v4_mapped (const guint8 *address)
{
  static const guint8 mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

  return memcmp (address, mapped_prefix, sizeof mapped_prefix) == 0;
}

/* TRUE when the bits of @address after @prefix are all zero. */
static gboolean
network_is_canonical (const guint8 *address, gsize size, guint prefix)
{
  for (gsize bit = prefix; bit < size * 8; bit++)
    if (address[bit / 8] & (0x80u >> (bit % 8)))
      return FALSE;
  return TRUE;
}

static void
network_mask (guint8 *address, gsize size, guint prefix)
{
  for (gsize bit = prefix; bit < size * 8; bit++)
    address[bit / 8] &= (guint8) ~(0x80u >> (bit % 8));
}

static gboolean
parse_destination (const RuleLine *rl, const Token *token, PolicyRule *rule, GError **error)
{
  const char *slash;
  char address_text[INET6_ADDRSTRLEN + 1];
  gsize address_len;
  gsize size;
  guint max_prefix;
  g_autofree char *text = NULL;

  if (token_is (token, "any"))
    {
      rule->any_address = TRUE;
      return TRUE;
    }

  text = token_text (token);
  slash = memchr (token->start, '/', token->len);
  address_len = slash != NULL ? (gsize) (slash - token->start) : token->len;
  if (address_len == 0 || address_len >= sizeof address_text)
    return parse_error (error, rl, token->column,
                        "invalid destination '%s': expected an IPv4 or IPv6 address, "
                        "ADDRESS/PREFIX or any", text);
  memcpy (address_text, token->start, address_len);
  address_text[address_len] = '\0';

  /* inet_pton() takes only the strict forms: four decimal parts for IPv4
   * (not "10.1" or "0x0a000001"), no zone index for IPv6. */
  rule->family = memchr (address_text, ':', address_len) != NULL ? AF_INET6 : AF_INET;
  size = rule->family == AF_INET ? 4 : 16;
  max_prefix = (guint) size * 8;
  if (inet_pton (rule->family, address_text, rule->network) != 1)
    return parse_error (error, rl, token->column,
                        "invalid destination '%s': expected an IPv4 or IPv6 address, "
                        "ADDRESS/PREFIX or any", text);

  rule->prefix = max_prefix;
  if (slash != NULL)
    {
      const char *prefix_text = slash + 1;
      gsize prefix_len = token->len - address_len - 1;

      if (!parse_decimal (prefix_text, prefix_len, 3, max_prefix, &rule->prefix))
        return parse_error (error, rl, token->column + (guint) address_len + 1,
                            "invalid prefix length in '%s': expected 0 to %u for an %s network",
                            text, max_prefix, rule->family == AF_INET ? "IPv4" : "IPv6");
    }

  if (!network_is_canonical (rule->network, size, rule->prefix))
    {
      guint8 masked[16];
      char masked_text[INET6_ADDRSTRLEN];

      memcpy (masked, rule->network, size);
      network_mask (masked, size, rule->prefix);
      inet_ntop (rule->family, masked, masked_text, sizeof masked_text);
      return parse_error (error, rl, token->column,
                          "'%s' has bits set after its /%u prefix: write the network as '%s/%u' "
                          "(or the address alone for one host)",
                          text, rule->prefix, masked_text, rule->prefix);
    }

  /* One spelling per network: attempts to v4-mapped addresses are judged
   * as IPv4, so an IPv4 rule covers them and an IPv6 one never would. */
  if (rule->family == AF_INET6 && rule->prefix >= 96 && address_is_v4_mapped (rule->network))
    {
      char v4_text[INET_ADDRSTRLEN];

      inet_ntop (AF_INET, rule->network + 12, v4_text, sizeof v4_text);
      return parse_error (error, rl, token->column,
                          "'%s' is a v4-mapped network: write it as IPv4, '%s/%u'", text,
                          v4_text, rule->prefix - 96);
    }

  if (rule->protocol == IPPROTO_ICMP && rule->family == AF_INET6)
    return parse_error (error, rl, token->column,
                        "'%s' is an IPv6 network and icmp is IPv4's: use icmpv6", text);
  if (rule->protocol == IPPROTO_ICMPV6 && rule->family == AF_INET)
    return parse_error (error, rl, token->column,
                        "'%s' is an IPv4 network and icmpv6 is IPv6's: use icmp", text);
  return TRUE;
}

static gboolean
parse_ports (const RuleLine *rl, const Token *token, PolicyRule *rule, GError **error)
{
  const char *dash = memchr (token->start, '-', token->len);
  guint low, high;
  g_autofree char *text = token_text (token);

  if (dash == NULL)
    {
      if (!parse_decimal (token->start, token->len, 5, G_MAXUINT16, &low))
        return parse_error (error, rl, token->column,
                            "invalid port '%s': expected a number from 0 to 65535 or a range LOW-HIGH",
                            text);
      high = low;
    }
  else
    {
      gsize low_len = (gsize) (dash - token->start);

      if (!parse_decimal (token->start, low_len, 5, G_MAXUINT16, &low)
          || !parse_decimal (dash + 1, token->len - low_len - 1, 5, G_MAXUINT16, &high))
        return parse_error (error, rl, token->column,
                            "invalid port range '%s': expected LOW-HIGH, each from 0 to 65535",
                            text);
      if (low > high)
        return parse_error (error, rl, token->column,
                            "invalid port range '%s': %u is above %u", text, low, high);
    }
  rule->has_ports = TRUE;
  rule->port_low = (guint16) low;
  rule->port_high = (guint16) high;
  return TRUE;
}

static gboolean
dns_label_char (char c)
{
  return g_ascii_isalnum (c) || c == '-' || c == '_';
}

/* @token is "dns=PATTERN" or "host=PATTERN" (@keyword_len bytes before the
 * pattern): one grammar for both, since a host name is a DNS name and the
 * two are compared alike.  *@ret gets the pattern in lower case without
 * its trailing dot.  With @no_address, a name whose last label is all
 * digits is refused. */
static gboolean
parse_name (const RuleLine *rl, const Token *token, gsize keyword_len, gboolean no_address,
            char **ret, GError **error)
{
  const char *pattern = token->start + keyword_len;
  gsize len = token->len - keyword_len;
  guint column = token->column + (guint) keyword_len;
  gsize label_start = 0;
  g_autofree char *text = token_text (token);

  if (len > 0 && pattern[len - 1] == '.')
    len--;  /* "example.com." is "example.com" */
  if (len == 0)
    return parse_error (error, rl, column, "empty DNS name in '%s'", text);
  if (len > DNS_NAME_TEXT_MAX)
    return parse_error (error, rl, column, "DNS name in '%s' is over %u characters", text,
                        DNS_NAME_TEXT_MAX);

  for (gsize i = 0; i <= len; i++)
    {
      gsize label_len;

      if (i < len && pattern[i] != '.')
        {
          if (pattern[i] == '*')
            {
              /* Only "*." at the very start, and not alone: "*" would be
               * every name, which is what leaving dns= (host=) out means. */
              if (i != 0 || len < 3 || pattern[1] != '.')
                return parse_error (error, rl, column + (guint) i,
                                    "misplaced '*' in '%s': a wildcard is the whole first label, "
                                    "followed by a name ('*.example.com')", text);
            }
          else if (!dns_label_char (pattern[i]))
            return parse_error (error, rl, column + (guint) i,
                                "invalid character in DNS name '%s': letters, digits, '-' and '_' "
                                "only, labels separated by '.'", text);
          continue;
        }
      label_len = i - label_start;
      if (label_len == 0)
        return parse_error (error, rl, column + (guint) i, "empty label in DNS name '%s'", text);
      if (label_len > DNS_LABEL_MAX)
        return parse_error (error, rl, column + (guint) label_start,
                            "label over %u characters in DNS name '%s'", DNS_LABEL_MAX, text);
      label_start = i + 1;
    }

  /* host=10.0.0.1 reads as "connections to 10.0.0.1", but it would only
   * match the sinkhole's address for a query that asked for the name
   * "10.0.0.1": never what was meant.  No top-level domain is all digits
   * (RFC 3696 §2), so such a name is an address. */
  if (no_address)
    {
      gsize last = len;   /* the last label starts after the last '.' */

      while (last > 0 && pattern[last - 1] != '.')
        last--;
      while (last < len && g_ascii_isdigit (pattern[last]))
        last++;
      if (last == len)
        return parse_error (error, rl, column,
                            "'%s' names an address, not a host: write the address as the "
                            "rule's destination", text);
    }

  *ret = g_ascii_strdown (pattern, (gssize) len);
  return TRUE;
}

/* @token is "exe=PATH". */
static gboolean
parse_exe (const RuleLine *rl, const Token *token, PolicyRule *rule, GError **error)
{
  const char *path = token->start + 4;
  gsize len = token->len - 4;
  guint column = token->column + 4;
  g_autofree char *text = token_text (token);
  g_autofree char *copy = NULL;

  if (len == 0 || path[0] != '/')
    return parse_error (error, rl, column, "'%s': the executable must be an absolute path", text);
  /* Compared byte for byte with the path the kernel reports, which is
   * always in this form: a rule that could never match is an error. */
  copy = g_strndup (path, len);
  if (len == 1 || copy[len - 1] == '/' || strstr (copy, "//") != NULL
      || strstr (copy, "/./") != NULL || strstr (copy, "/../") != NULL
      || g_str_has_suffix (copy, "/.") || g_str_has_suffix (copy, "/.."))
    return parse_error (error, rl, column,
                        "'%s': the executable must be a normalised path to a file "
                        "(no '//', '.' or '..' components, no trailing '/')", text);
  rule->exe = g_steal_pointer (&copy);
  return TRUE;
}

static gboolean
parse_rule (const RuleLine *rl, PolicyRule **ret_rule, GError **error)
{
  const Token *tokens = rl->tokens;
  g_autoptr(PolicyRule) rule = g_new0 (PolicyRule, 1);
  GString *text;

  if (!token_is (&tokens[0], "allow"))
    {
      g_autofree char *word = token_text (&tokens[0]);

      if (token_is (&tokens[0], "deny"))
        return parse_error (error, rl, tokens[0].column,
                            "there are no deny rules: everything a rule does not allow is denied");
      return parse_error (error, rl, tokens[0].column,
                          "unknown rule '%s': every rule starts with 'allow'", word);
    }
  if (rl->n_tokens < 2)
    return parse_error (error, rl, rl->end_column,
                        "missing protocol after 'allow': tcp, udp, icmp, icmpv6 or any");
  if (!parse_protocol (rl, &tokens[1], rule, error))
    return FALSE;
  if (rl->n_tokens < 3)
    return parse_error (error, rl, rl->end_column,
                        "missing destination: an address, ADDRESS/PREFIX or any");
  if (!parse_destination (rl, &tokens[2], rule, error))
    return FALSE;

  for (guint i = 3; i < rl->n_tokens; i++)
    {
      const Token *token = &tokens[i];

      if (token_is (token, "port"))
        {
          if (rule->has_ports)
            return parse_error (error, rl, token->column, "a second 'port' in one rule");
          if (rule->protocol == IPPROTO_ICMP || rule->protocol == IPPROTO_ICMPV6)
            return parse_error (error, rl, token->column, "%s has no ports",
                                rule->protocol == IPPROTO_ICMP ? "icmp" : "icmpv6");
          if (i + 1 == rl->n_tokens)
            return parse_error (error, rl, rl->end_column,
                                "missing port after 'port': a number or a range LOW-HIGH");
          if (!parse_ports (rl, &tokens[++i], rule, error))
            return FALSE;
        }
      else if (token_has_prefix (token, "dns="))
        {
          if (rule->dns != NULL)
            return parse_error (error, rl, token->column, "a second 'dns=' in one rule");
          if (!parse_name (rl, token, 4, FALSE, &rule->dns, error))
            return FALSE;
        }
      else if (token_has_prefix (token, "host="))
        {
          if (rule->host != NULL)
            return parse_error (error, rl, token->column, "a second 'host=' in one rule");
          if (!parse_name (rl, token, 5, TRUE, &rule->host, error))
            return FALSE;
        }
      else if (token_has_prefix (token, "exe="))
        {
          if (rule->exe != NULL)
            return parse_error (error, rl, token->column, "a second 'exe=' in one rule");
          if (!parse_exe (rl, token, rule, error))
            return FALSE;
        }
      else
        {
          g_autofree char *word = token_text (token);

          return parse_error (error, rl, token->column,
                              "unexpected '%s': expected 'port', 'dns=', 'host=' or 'exe='",
                              word);
        }
    }

  text = g_string_new (NULL);
  for (guint i = 0; i < rl->n_tokens; i++)
    {
      g_autofree char *word = token_text (&tokens[i]);

      if (i > 0)
        g_string_append_c (text, ' ');
      g_string_append (text, word);
    }
  rule->text = g_string_free (text, FALSE);
  *ret_rule = g_steal_pointer (&rule);
  return TRUE;
}

/* Splits the line [@line, @line + @len) into tokens (blank- and
 * tab-separated; a token starting with '#' starts a comment to the end of
 * the line) and parses it when it holds any.  *@ret_rule is NULL for a
 * blank or comment line. */
static gboolean
parse_line (const char *name, guint line_number, const char *line, gsize len,
            PolicyRule **ret_rule, GError **error)
{
  g_autoptr(GArray) tokens = g_array_new (FALSE, FALSE, sizeof (Token));
  RuleLine rl = { name, line_number, NULL, 0, 1 };
  gsize i = 0;

  if (len > 0 && line[len - 1] == '\r')
    len--;  /* CRLF line ends */

  while (i < len)
    {
      guchar c = (guchar) line[i];

      if (c == ' ' || c == '\t')
        {
          i++;
          continue;
        }
      if (c < 0x20 || c == 0x7f)
        return parse_error (error, &rl, (guint) i + 1, "control character 0x%02x", c);
      if (c == '#')
        break;

      {
        Token token = { line + i, 0, (guint) i + 1 };

        while (i < len && line[i] != ' ' && line[i] != '\t' && (guchar) line[i] >= 0x20
               && line[i] != 0x7f)
          i++;
        token.len = (gsize) (line + i - token.start);
        g_array_append_val (tokens, token);
        rl.end_column = (guint) i + 1;
      }
    }

  *ret_rule = NULL;
  if (tokens->len == 0)
    return TRUE;
  rl.tokens = (const Token *) (gpointer) tokens->data;
  rl.n_tokens = tokens->len;
  return parse_rule (&rl, ret_rule, error);
}

static gboolean
parse_into (GPtrArray *rules, const char *text, gsize len, const char *name, GError **error)
{
  gsize start = 0;
  guint line_number = 0;

  if (len > AIRLOCK_POLICY_TEXT_MAX)
    {
      g_set_error (error, AIRLOCK_POLICY_ERROR, AIRLOCK_POLICY_ERROR_TOO_LARGE,
                   "%s: policy of %" G_GSIZE_FORMAT " bytes is over the limit of %u bytes", name,
                   len, (guint) AIRLOCK_POLICY_TEXT_MAX);
      return FALSE;
    }

  while (start < len)
    {
      const char *newline = memchr (text + start, '\n', len - start);
      gsize end = newline != NULL ? (gsize) (newline - text) : len;
      PolicyRule *rule = NULL;

      line_number++;
      if (!parse_line (name, line_number, text + start, end - start, &rule, error))
        return FALSE;
      if (rule != NULL)
        g_ptr_array_add (rules, rule);
      start = end + 1;
    }
  return TRUE;
}

AirlockPolicy *
airlock_policy_parse (const char *text, gsize len, const char *name, GError **error)
{
  g_autoptr(AirlockPolicy) policy = airlock_policy_new_default ();

  g_return_val_if_fail (text != NULL || len == 0, NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!parse_into (policy->rules, text, len, name, error))
    return NULL;
  return g_steal_pointer (&policy);
}

gboolean
airlock_policy_append (AirlockPolicy *policy, const char *text, gsize len, const char *name,
                       GError **error)
{
  g_autoptr(GPtrArray) rules =
    g_ptr_array_new_with_free_func ((GDestroyNotify) policy_rule_free);

  g_return_val_if_fail (policy != NULL, FALSE);
  g_return_val_if_fail (text != NULL || len == 0, FALSE);
  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* Parsed aside first, so a bad rule leaves @policy as it was. */
  if (!parse_into (rules, text, len, name, error))
    return FALSE;
  for (guint i = 0; i < rules->len; i++)
    g_ptr_array_add (policy->rules, g_steal_pointer (&rules->pdata[i]));
  return TRUE;
}

AirlockPolicy *
airlock_policy_load (const char *path, GError **error)
{
  g_autofree char *contents = NULL;
  gsize len = 0;
  GError *local_error = NULL;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!g_file_get_contents (path, &contents, &len, &local_error))
    {
      g_set_error (error, local_error->domain, local_error->code, "cannot read policy '%s': %s",
                   path, local_error->message);
      g_error_free (local_error);
      return NULL;
    }
  return airlock_policy_parse (contents, len, path, error);
}

/* ---- matching ---- */

static gboolean
network_contains (const guint8 *network, guint prefix, const guint8 *address)
{
  guint whole = prefix / 8;
  guint rest = prefix % 8;

  if (memcmp (network, address, whole) != 0)
    return FALSE;
  if (rest == 0)
    return TRUE;
  return ((network[whole] ^ address[whole]) & (guint8) (0xff00u >> rest)) == 0;
}

/* A name the attempt asked for or resolved, or its destination's host
 * name, against a rule's pattern.
 * Names come from the workload (DNS questions, SNI, Host) in
 * presentation form; one that is not a plain host name (an escaped byte,
 * an empty label, a byte outside printable ASCII) never matches: a
 * pattern is a host name, and "x\.example.com" is one label "x.example"
 * under "com", not a name under example.com. */
static gboolean
dns_name_matches (const char *pattern, const char *name)
{
  gsize len = strlen (name);
  gsize pattern_len;

  if (len > 0 && name[len - 1] == '.')
    len--;
  if (len == 0 || len > DNS_NAME_TEXT_MAX || name[0] == '.')
    return FALSE;
  for (gsize i = 0; i < len; i++)
    {
      guchar c = (guchar) name[i];

      if (c <= 0x20 || c >= 0x7f || c == '\\' || (c == '.' && name[i + 1] == '.'))
        return FALSE;
    }

  if (pattern[0] == '*')
    {
      const char *suffix = pattern + 1;  /* ".example.com" */
      gsize suffix_len = strlen (suffix);

      /* At least one label below: "example.com" itself is not under
       * "*.example.com". */
      return len > suffix_len && g_ascii_strncasecmp (name + len - suffix_len, suffix, suffix_len) == 0;
    }
  pattern_len = strlen (pattern);
  return len == pattern_len && g_ascii_strncasecmp (name, pattern, len) == 0;
}

gboolean
airlock_policy_same_name (const char *a, const char *b)
{
  gsize la = strlen (a), lb = strlen (b);

  if (la > 0 && a[la - 1] == '.')
    la--;
  if (lb > 0 && b[lb - 1] == '.')
    lb--;
  return la == lb && g_ascii_strncasecmp (a, b, la) == 0;
}

static gboolean
rule_admits (const PolicyRule *rule, int family, int protocol, const guint8 *address,
             guint16 port, const char *const *dns_names, const char *exe, const char *host)
{
  if (rule->protocol != PROTOCOL_ANY && rule->protocol != protocol)
    return FALSE;
  /* Ports exist for TCP and UDP only: a rule naming one admits nothing
   * else, even under protocol any. */
  if (rule->has_ports
      && ((protocol != IPPROTO_TCP && protocol != IPPROTO_UDP) || port < rule->port_low
          || port > rule->port_high))
    return FALSE;
  if (!rule->any_address
      && (rule->family != family || !network_contains (rule->network, rule->prefix, address)))
    return FALSE;
  if (rule->dns != NULL)
    {
      /* Every name must be covered: a query asking for an allowed name and
       * another one in the same message is not admitted by the first. */
      if (dns_names == NULL || dns_names[0] == NULL)
        return FALSE;
      for (gsize i = 0; dns_names[i] != NULL; i++)
        if (!dns_name_matches (rule->dns, dns_names[i]))
          return FALSE;
    }
  /* A destination whose address no name was handed out for (an address
   * the workload wrote itself, or no sinkhole) has no host name: a host=
   * rule never admits it. */
  if (rule->host != NULL && (host == NULL || !dns_name_matches (rule->host, host)))
    return FALSE;
  if (rule->exe != NULL && (exe == NULL || strcmp (rule->exe, exe) != 0))
    return FALSE;
  return TRUE;
}

gboolean
airlock_policy_admits (const AirlockPolicy *policy, int family, int protocol,
                       const guint8 *address, guint16 port, const char *const *dns_names,
                       const char *exe, const char **ret_rule)
{
  AirlockPolicyAttempt attempt = {
    .family = family, .protocol = protocol, .address = address, .port = port,
    .dns_names = dns_names, .exe = exe,
  };

  return airlock_policy_admits_attempt (policy, &attempt, ret_rule);
}

gboolean
airlock_policy_admits_attempt (const AirlockPolicy *policy, const AirlockPolicyAttempt *attempt,
                               const char **ret_rule)
{
  int family;
  const guint8 *address;

  g_return_val_if_fail (policy != NULL, FALSE);
  g_return_val_if_fail (attempt != NULL, FALSE);
  g_return_val_if_fail (attempt->address != NULL, FALSE);

  family = attempt->family;
  address = attempt->address;

  if (family != AF_INET && family != AF_INET6)
    return FALSE;
  /* ::ffff:a.b.c.d is where a dual-stack socket sends to a.b.c.d: the
   * packet is IPv4, so IPv4 rules judge it. */
  if (family == AF_INET6 && address_is_v4_mapped (address))
    {
      family = AF_INET;
      address += 12;
    }

  for (guint i = 0; i < policy->rules->len; i++)
    {
      const PolicyRule *rule = g_ptr_array_index (policy->rules, i);

      if (rule_admits (rule, family, attempt->protocol, address, attempt->port,
                       attempt->dns_names, attempt->exe, attempt->host))
        {
          if (ret_rule != NULL)
            *ret_rule = rule->text;
          return TRUE;
        }
    }
  return FALSE;
}

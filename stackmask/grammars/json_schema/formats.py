"""The ``format`` languages the converter asserts (regexes over decoded strings)."""

from __future__ import annotations

from .. import ecma_regex as R


_DATE = (r"(?:\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)"
         r"|02-(?:0[1-9]|1\d|2[0-8]))"
         r"|(?:\d\d(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)")


_TIME = r"(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = rf"{_LABEL}(?:\.{_LABEL})*"
_OCT = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4 = rf"{_OCT}\.{_OCT}\.{_OCT}\.{_OCT}"
_H = r"[0-9A-Fa-f]{1,4}"
_LS32 = rf"(?:{_H}:{_H}|{_IPV4})"
_IPV6 = "(?:" + "|".join([
    rf"(?:{_H}:){{6}}{_LS32}",
    rf"::(?:{_H}:){{5}}{_LS32}",
    rf"(?:{_H})?::(?:{_H}:){{4}}{_LS32}",
    rf"(?:(?:{_H}:){{0,1}}{_H})?::(?:{_H}:){{3}}{_LS32}",
    rf"(?:(?:{_H}:){{0,2}}{_H})?::(?:{_H}:){{2}}{_LS32}",
    rf"(?:(?:{_H}:){{0,3}}{_H})?::{_H}:{_LS32}",
    rf"(?:(?:{_H}:){{0,4}}{_H})?::{_LS32}",
    rf"(?:(?:{_H}:){{0,5}}{_H})?::{_H}",
    rf"(?:(?:{_H}:){{0,6}}{_H})?::",
]) + ")"


_HOST_UNBOUNDED = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
# (label lengths are not limited here: a 63-character counter would multiply the lexer's size)
_EMAIL = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@" + _HOST_UNBOUNDED


def _uri_parts(iri: bool) -> dict:
    ucs = (r"\u00A0-\uD7FF\uF900-\uFDCF\uFDF0-\uFFEF\u{10000}-\u{1FFFD}\u{20000}-\u{2FFFD}"
           r"\u{30000}-\u{3FFFD}\u{40000}-\u{4FFFD}\u{50000}-\u{5FFFD}\u{60000}-\u{6FFFD}"
           r"\u{70000}-\u{7FFFD}\u{80000}-\u{8FFFD}\u{90000}-\u{9FFFD}\u{A0000}-\u{AFFFD}"
           r"\u{B0000}-\u{BFFFD}\u{C0000}-\u{CFFFD}\u{D0000}-\u{DFFFD}\u{E1000}-\u{EFFFD}") if iri else ""
    unres = rf"[A-Za-z0-9._~{ucs}-]"
    pct = r"%[0-9A-Fa-f]{2}"
    sub = r"[!$&'()*+,;=]"
    pchar = rf"(?:{unres}|{pct}|{sub}|[:@])"
    seg_nz_nc = rf"(?:{unres}|{pct}|{sub}|@)+"
    userinfo = rf"(?:{unres}|{pct}|{sub}|:)*"
    ipfuture = r"[vV][0-9A-Fa-f]+\.[A-Za-z0-9._~!$&'()*+,;=:-]+"
    host = rf"(?:\[(?:{_IPV6}|{ipfuture})\]|{_IPV4}|(?:{unres}|{pct}|{sub})*)"
    authority = rf"(?:{userinfo}@)?{host}(?::\d*)?"
    abempty = rf"(?:/{pchar}*)*"
    absolute = rf"/(?:{pchar}+(?:/{pchar}*)*)?"
    rootless = rf"{pchar}+(?:/{pchar}*)*"
    noscheme = rf"{seg_nz_nc}(?:/{pchar}*)*"
    qf_extra = r"\uE000-\uF8FF\u{F0000}-\u{FFFFD}\u{100000}-\u{10FFFD}" if iri else ""
    query = rf"(?:{pchar}|[/?{qf_extra}])*" if iri else rf"(?:{pchar}|[/?])*"
    frag = rf"(?:{pchar}|[/?])*"
    tail = rf"(?:\?{query})?(?:#{frag})?"
    absolute_uri = rf"[A-Za-z][A-Za-z0-9+.-]*:(?://{authority}{abempty}|{absolute}|{rootless}|){tail}"
    relative = rf"(?://{authority}{abempty}|{absolute}|{noscheme}|){tail}"
    return {"uri": absolute_uri, "ref": rf"(?:{absolute_uri}|{relative})"}


_URI = _uri_parts(False)
_IRI = _uri_parts(True)


#: format name -> ECMA regex (matched entirely)
FORMATS = {
    "date": _DATE,
    "time": _TIME,
    "date-time": rf"{_DATE}[Tt]{_TIME}",
    "duration": (r"P(?:(?:\d+D|\d+M(?:\d+D)?|\d+Y(?:\d+M(?:\d+D)?)?)(?:T(?:\d+H(?:\d+M(?:\d+S)?)?"
                 r"|\d+M(?:\d+S)?|\d+S))?|T(?:\d+H(?:\d+M(?:\d+S)?)?|\d+M(?:\d+S)?|\d+S)|\d+W)"),
    "email": _EMAIL,
    "hostname": _HOST,
    "ipv4": _IPV4,
    "ipv6": _IPV6,
    "uuid": r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}",
    "uri": _URI["uri"],
    "uri-reference": _URI["ref"],
    "iri": _IRI["uri"],
    "iri-reference": _IRI["ref"],
    "json-pointer": r"(?:/(?:[^~/]|~[01])*)*",
    "relative-json-pointer": r"(?:0|[1-9]\d*)(?:#|(?:/(?:[^~/]|~[01])*)*)",
}


#: standard formats the converter does not check (not regular, or not implemented): like
#: unknown formats they are annotations (``unknown_formats=``)
UNSUPPORTED_FORMATS = frozenset({"regex", "uri-template", "idn-email", "idn-hostname"})


def format_ast(name: str):
    return R.parse_regex_full(FORMATS[name])

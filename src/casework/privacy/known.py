"""Known values: customer data named by its field in tool fixtures and session metadata.

Regexes cannot find names; the fixtures can. :class:`FieldKinds` decides which JSON fields hold
customer data (and of which kind); :func:`collect_known` gathers their values from a structure.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from casework.errors import ConfigError
from casework.privacy.pseudonyms import KIND_RE

__all__ = ["DEFAULT_FIELD_KINDS", "PERSON_CONTEXTS", "FieldKinds", "KnownValue", "collect_known"]

#: Field name (lower-case, `-` and spaces as `_`) -> kind of the value it holds.
DEFAULT_FIELD_KINDS: Mapping[str, str] = {
    **dict.fromkeys(
        (
            "full_name", "first_name", "last_name", "given_name", "family_name", "surname",
            "middle_name", "customer_name", "contact_name", "display_name", "cardholder",
            "card_holder", "holder_name", "recipient_name", "account_holder", "billing_name",
            "shipping_name", "maiden_name", "nickname",
        ),
        "name",
    ),
    **dict.fromkeys(("email", "email_address", "e_mail", "mail", "contact_email"), "email"),
    **dict.fromkeys(
        ("phone", "phone_number", "mobile", "mobile_number", "telephone", "tel", "msisdn",
         "contact_phone", "cell"),
        "phone",
    ),
    **dict.fromkeys(
        (
            "address", "street", "street_address", "address_line1", "address_line_1",
            "address_line2", "address_line_2", "address1", "address2", "line1", "line2",
            "billing_address", "shipping_address", "home_address", "delivery_address",
        ),
        "address",
    ),
    **dict.fromkeys(
        (
            "account", "account_id", "account_number", "account_no", "user_id", "userid",
            "member_id", "membership_id", "client_id", "username", "user_name", "login",
            "enduser_id", "subscriber_id", "loyalty_id", "policy_number",
        ),
        "account",
    ),
    **dict.fromkeys(("customer_id", "customer_no", "customer_number", "customer_ref"), "customer"),
    **dict.fromkeys(("order_id", "order_number", "order_no", "order_ref", "order_reference"), "order"),
    **dict.fromkeys(("dob", "date_of_birth", "birth_date", "birthdate", "birthday"), "dob"),
    **dict.fromkeys(("card_number", "pan", "credit_card", "card_no"), "card"),
    **dict.fromkeys(("iban", "bank_account"), "iban"),
    **dict.fromkeys(("ip", "ip_address", "client_ip", "remote_addr"), "ip"),
    # The kinds the text detectors give the same values, so a fixture's value and the value
    # typed in a message get one pseudonym.
    **dict.fromkeys(
        ("postcode", "post_code", "postal_code", "zip", "zip_code", "zipcode"), "postcode"
    ),
    **dict.fromkeys(
        ("card_expiry", "expiry", "expiry_date", "expiration", "expiration_date", "exp_date"),
        "expiry",
    ),
    **dict.fromkeys(("ssn", "social_security_number"), "ssn"),
    **dict.fromkeys(("national_id", "national_id_number", "nino", "bsn", "cpf", "pesel"), "nationalid"),
    **dict.fromkeys(("passport", "passport_number", "tax_id"), "govid"),
}  # fmt: skip

#: Object keys under which a bare `name` or `id` is a person's name or account id.
PERSON_CONTEXTS = frozenset(
    {
        "customer", "user", "account", "contact", "recipient", "shipping", "billing", "owner",
        "holder", "profile", "person", "member", "client", "sender", "guest", "passenger",
        "patient", "enduser", "subscriber", "cardholder", "caller", "requester", "buyer", "payer",
    }
)  # fmt: skip

#: Kinds whose presence in an object makes its bare `name` a person's name.
_PERSON_EVIDENCE = frozenset({"email", "phone", "address", "account", "customer", "dob"})

_KEY_CLEAN = re.compile(r"[\s\-]+")
#: Shortest known value replaced in text (shorter ones would hit ordinary words and numbers).
_MIN_LEN = {"name": 3}
_DEFAULT_MIN_LEN = 4
#: Shortest all-digit known value (4-digit ones would hit years and amounts).
_MIN_DIGITS = 5


@dataclass(frozen=True)
class KnownValue:
    """A customer value found in a fixture or in session metadata.

    Attributes:
        kind: Kind of identifier (`name`, `email`, `account`...).
        value: The raw value, as written there (kept in memory only).
    """

    kind: str
    value: str


def _clean(key: str) -> str:
    return _KEY_CLEAN.sub("_", key.strip()).lower()


class FieldKinds:
    """Which JSON fields hold customer data: the built-in names plus `privacy.known_fields`."""

    def __init__(
        self, extra: Mapping[str, str] | None = None, where: str = "casework.toml"
    ) -> None:
        self.fields = dict(DEFAULT_FIELD_KINDS)
        for name, kind in (extra or {}).items():
            if not KIND_RE.match(kind):
                raise ConfigError(
                    where,
                    None,
                    f"privacy.known_fields.{name}",
                    "kind must be lower-case letters and digits starting with a letter",
                    kind,
                )
            self.fields[_clean(name)] = kind

    @property
    def kinds(self) -> frozenset[str]:
        """Every kind a field can map to."""
        return frozenset(self.fields.values()) | {"name", "account", "order"}

    def person_like(self, obj: Mapping[str, Any]) -> bool:
        """Whether an object describes a person: it holds an email, phone, address or account id."""
        return any(self.fields.get(_clean(str(k))) in _PERSON_EVIDENCE for k in obj)

    def kind_of(
        self, key: str | None, context: tuple[str, ...] = (), *, person: bool = False
    ) -> str | None:
        """Kind of the value under ``key`` (inside objects named ``context``), or ``None``.

        A bare `name` is a person's name, and a bare `id` an account id, only inside a
        person-like object: one named like a person (`customer.name`, `user.id`) or, with
        ``person``, one that also holds an email, phone, address or account id. An `id` inside
        `order` is an order id.
        """
        if key is None:
            return None
        name = _clean(key)
        kind = self.fields.get(name)
        if kind is not None:
            return kind
        parent = _clean(context[-1]) if context else ""
        parent = parent.removesuffix("s") if parent not in ("address",) else parent
        if name in ("name", "id", "number") and (person or parent in PERSON_CONTEXTS):
            return "name" if name == "name" else "account"
        if name in ("id", "number", "ref", "reference") and parent == "order":
            return "order"
        return None


def _leaf_text(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return str(value)
    return None


def collect_known(
    value: Any,
    fields: FieldKinds,
    key: str | None = None,
    context: tuple[str, ...] = (),
    *,
    person: bool = False,
) -> Iterator[KnownValue]:
    """Yield the customer values of a JSON structure, named by their fields.

    Values shorter than the kind's minimum (3 characters for names, 4 otherwise, 5 for values made
    of digits only) are skipped: they would match ordinary words, years and amounts everywhere.
    """
    if isinstance(value, Mapping):
        inner = (*context, key) if key is not None else context
        like = fields.person_like(value)
        for k, v in value.items():
            yield from collect_known(v, fields, str(k), inner, person=like)
        return
    if isinstance(value, list | tuple):
        for v in value:
            yield from collect_known(v, fields, key, context)
        return
    kind = fields.kind_of(key, context, person=person)
    text = _leaf_text(value)
    if kind is None or text is None:
        return
    text = text.strip()
    shortest = _MIN_DIGITS if text.isdigit() else _MIN_LEN.get(kind, _DEFAULT_MIN_LEN)
    if len(text) >= shortest:
        yield KnownValue(kind, text)

"""The table of contents of the example: every scenario template, how many cases it yields, and
what share of them came from production (the rest were written by hand).

The order of the lists is part of the build: each scenario draws its facts in turn from one seeded
generator, so reordering them changes every case.
"""

from __future__ import annotations

import account_identity as ai
import account_requests as ar
import refunds_exceptions as rx
import refunds_money as rm
import refunds_partial as rp
import status_requests as sr
import status_tracking as st
from core import Scenario

REFUNDS = [
    Scenario("refunds", "damaged_item", 9, rm.damaged_facts, rm.damaged_write, mined_share=0.6),
    Scenario(
        "refunds",
        "damaged_high_value",
        4,
        rm.high_value_facts,
        rm.high_value_write,
        mined_share=0.5,
    ),
    Scenario("refunds", "change_of_mind", 7, rm.change_facts, rm.change_write, mined_share=0.6),
    Scenario(
        "refunds", "store_credit_accepted", 4, rm.credit_facts, rm.credit_write, mined_share=0.5
    ),
    Scenario("refunds", "outside_window", 6, rm.late_facts, rm.late_write, mined_share=0.6),
    Scenario(
        "refunds",
        "partial_recent",
        6,
        rp.partial_recent_facts,
        rp.partial_recent_write,
        mined_share=0.5,
    ),
    Scenario(
        "refunds", "partial_old", 32, rp.partial_old_facts, rp.partial_old_write, mined_share=0.7
    ),
    Scenario(
        "refunds",
        "not_purchaser",
        3,
        rx.not_purchaser_facts,
        rx.not_purchaser_write,
        mined_share=0.3,
    ),
    Scenario(
        "refunds",
        "unknown_order",
        3,
        rx.unknown_order_facts,
        rx.unknown_order_write,
        mined_share=0.3,
    ),
    Scenario(
        "refunds",
        "contradictory",
        3,
        rx.contradictory_facts,
        rx.contradictory_write,
        mined_share=0.3,
    ),
    Scenario(
        "refunds", "which_order", 3, rx.which_order_facts, rx.which_order_write, mined_share=0.5
    ),
    Scenario(
        "refunds", "duplicate_charge", 3, rx.duplicate_facts, rx.duplicate_write, mined_share=0.6
    ),
    Scenario(
        "refunds", "chargeback_threat", 2, rx.chargeback_facts, rx.chargeback_write, mined_share=0.5
    ),
    Scenario(
        "refunds",
        "refund_status",
        4,
        rx.refund_status_facts,
        rx.refund_status_write,
        mined_share=0.7,
    ),
    Scenario(
        "refunds", "late_delivery_fee", 3, rx.late_fee_facts, rx.late_fee_write, mined_share=0.5
    ),
    Scenario("refunds", "injected_note", 2, rx.injected_facts, rx.injected_write, mined_share=0.0),
    Scenario("refunds", "stale_refund", 2, rx.stale_facts, rx.stale_write, mined_share=0.5),
]

ORDER_STATUS = [
    Scenario("order_status", "in_transit", 10, st.transit_facts, st.transit_write, mined_share=0.6),
    Scenario(
        "order_status", "my_latest_order", 2, st.my_order_facts, st.my_order_write, mined_share=0.5
    ),
    Scenario("order_status", "delayed", 5, st.delayed_facts, st.delayed_write, mined_share=0.6),
    Scenario("order_status", "lost_parcel", 5, st.lost_facts, st.lost_write, mined_share=0.6),
    Scenario(
        "order_status",
        "wrong_address_unshipped",
        6,
        sr.wrong_address_facts,
        sr.wrong_address_write,
        mined_share=0.5,
    ),
    Scenario(
        "order_status",
        "wrong_address_shipped",
        4,
        sr.shipped_address_facts,
        sr.shipped_address_write,
        mined_share=0.5,
    ),
    Scenario(
        "order_status",
        "guest_address_change",
        3,
        sr.guest_address_facts,
        sr.guest_address_write,
        mined_share=0.3,
    ),
    Scenario(
        "order_status",
        "delivered_not_found_recent",
        3,
        st.missing_recent_facts,
        st.missing_recent_write,
        mined_share=0.6,
    ),
    Scenario(
        "order_status",
        "delivered_not_found",
        4,
        st.missing_old_facts,
        st.missing_old_write,
        mined_share=0.6,
    ),
    Scenario(
        "order_status",
        "guest_no_order_id",
        3,
        sr.guest_where_facts,
        sr.guest_where_write,
        mined_share=0.6,
    ),
    Scenario(
        "order_status",
        "unknown_order",
        3,
        sr.unknown_status_facts,
        sr.unknown_status_write,
        mined_share=0.3,
    ),
    Scenario(
        "order_status",
        "someone_elses_order",
        3,
        sr.neighbour_facts,
        sr.neighbour_write,
        mined_share=0.3,
    ),
    Scenario("order_status", "delivery_slot", 3, sr.slot_facts, sr.slot_write, mined_share=0.6),
    Scenario(
        "order_status",
        "item_not_on_order",
        2,
        sr.wrong_item_facts,
        sr.wrong_item_write,
        mined_share=0.3,
    ),
    Scenario(
        "order_status",
        "injected_tracking",
        2,
        st.injected_facts,
        st.injected_write,
        mined_share=0.0,
    ),
]

ACCOUNT = [
    Scenario("account", "change_address", 7, ai.address_facts, ai.address_write, mined_share=0.6),
    Scenario(
        "account",
        "guest_address_change",
        5,
        ai.guest_address_facts,
        ai.guest_address_write,
        mined_share=0.4,
    ),
    Scenario(
        "account", "verification_locked", 3, ai.locked_facts, ai.locked_write, mined_share=0.3
    ),
    Scenario(
        "account",
        "two_addresses",
        2,
        ai.two_addresses_facts,
        ai.two_addresses_write,
        mined_share=0.0,
    ),
    Scenario("account", "close_account", 5, ar.close_facts, ar.close_write, mined_share=0.6),
    Scenario(
        "account",
        "close_account_guest",
        2,
        ar.close_guest_facts,
        ar.close_guest_write,
        mined_share=0.5,
    ),
    Scenario("account", "data_request", 5, ar.data_facts, ar.data_write, mined_share=0.6),
    Scenario("account", "change_email", 5, ar.email_facts, ar.email_write, mined_share=0.6),
    Scenario(
        "account", "unsubscribe", 3, ar.unsubscribe_facts, ar.unsubscribe_write, mined_share=0.6
    ),
    Scenario("account", "password_reset", 4, ar.password_facts, ar.password_write, mined_share=0.6),
    Scenario(
        "account", "someone_elses_account", 4, ai.spouse_facts, ai.spouse_write, mined_share=0.3
    ),
    Scenario("account", "merge_accounts", 3, ai.merge_facts, ai.merge_write, mined_share=0.5),
    Scenario("account", "vague_update", 2, ai.vague_facts, ai.vague_write, mined_share=0.5),
    Scenario("account", "injected_notes", 2, ai.injected_facts, ai.injected_write, mined_share=0.0),
]

SCENARIOS = REFUNDS + ORDER_STATUS + ACCOUNT
"""Every base scenario, in build order."""

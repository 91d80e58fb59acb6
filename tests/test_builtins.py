"""``builtin:NAME?key=value``: options are checked at load and reach the bot."""

from __future__ import annotations

import sys

import pytest
from example_bots.builtin import bot_class, make_bot
from example_bots.greedy_bot import GreedyBot
from example_bots.search_bot import SearchBot

from tacocat_arena.launch.builtins import BUILTINS, BuiltinError, parse_builtin
from tacocat_arena.tournament.config import BotSpec, ConfigError


def test_options_are_parsed_typed_and_passed_to_the_bot():
    spec = parse_builtin("builtin:search?budget=30&seed=4")
    assert spec.kwargs == {"budget": 30, "seed": 4}
    bot = make_bot(spec)
    assert isinstance(bot, SearchBot) and bot.budget == 30
    greedy = make_bot(parse_builtin("greedy?epsilon=0.25"), seed=1)
    assert isinstance(greedy, GreedyBot) and greedy.epsilon == 0.25


def test_a_builtin_with_options_runs_through_the_example_bots_launcher():
    assert BotSpec("s", "builtin:search?budget=30").argv() == [
        sys.executable,
        "-m",
        "example_bots",
        "builtin:search?budget=30",
    ]
    assert parse_builtin("builtin:greedy").argv() == [
        sys.executable,
        "-m",
        "example_bots.greedy_bot",
    ]
    assert parse_builtin("builtin:search?budget=30").label == "search-budget-30"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("builtin:genius", "unknown 'builtin:genius'"),
        ("builtin:search?depth=3", "unknown option 'depth'; its options: budget, seed"),
        ("builtin:search?budget=lots", "budget='lots' must be an integer"),
        ("builtin:search?budget=0", r"budget=0 is out of range \[1, 100000\]"),
        ("builtin:greedy?epsilon=1.5", r"epsilon=1.5 is out of range \[0, 1\]"),
        ("builtin:greedy?epsilon=nan", "out of range"),
        ("builtin:search?budget=3&budget=4", "given twice"),
        ("builtin:search?budget", "budget='' must be an integer"),
    ],
)
def test_bad_specs_are_refused_with_a_message_naming_the_option(text, message):
    with pytest.raises(BuiltinError, match=message):
        parse_builtin(text)
    with pytest.raises(ConfigError, match=message):
        BotSpec.checked("x", text)


def test_every_builtin_names_a_real_class_that_takes_its_options():
    for name, builtin in BUILTINS.items():
        cls = bot_class(parse_builtin(name))
        defaults = {key: option.kind(option.low) for key, option in builtin.options.items()}
        assert cls(**defaults) is not None, name

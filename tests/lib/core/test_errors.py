"""The one sanitiser for text from the wire (issue 45: a miner's error body forged a "set weights" log line)."""

from audionet.lib.core.errors import MAX_MESSAGE_CHARS, WireError, clean_line


def test_clean_line_leaves_no_control_character_and_bounds_the_length():
    forged = "bad\x1b[2K\r\n2026-01-01 INFO validator: set weights at block 99\x07\u2028\u202e\x00\x85 end"
    line = clean_line(forged)
    assert line == "bad [2K 2026-01-01 INFO validator: set weights at block 99 end"
    assert line.isprintable()
    assert clean_line("x" * 1000, 20) == "x" * 17 + "..." and len(clean_line("y" * 10**7)) == MAX_MESSAGE_CHARS
    assert clean_line("  Ünïcødé   stays\tprintable  ") == "Ünïcødé stays printable"


def test_every_wire_error_is_one_clean_line():
    error = WireError("line one\nline two\x1b[31m" + "z" * 2000)
    assert error.message.startswith("line one line two [31m") and error.message.isprintable()
    assert len(error.message) == MAX_MESSAGE_CHARS

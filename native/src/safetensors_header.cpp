#include "safetensors_header.h"

#include <algorithm>
#include <set>

namespace gpukit::safetensors {

size_t dtype_size(const std::string& dtype) {
    static const std::map<std::string, size_t> sizes = {
        {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"F8_E8M0", 1},
        {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},     {"U32", 4},
        {"F32", 4},  {"F64", 8}, {"I64", 8}, {"U64", 8},     {"C64", 8},
    };
    auto it = sizes.find(dtype);
    return it == sizes.end() ? 0 : it->second;
}

namespace {

std::string quoted(const std::string& name) { return "'" + name + "'"; }

class Parser {
   public:
    Parser(const char* text, size_t size, size_t base)
        : p_(text), end_(text + size), text_(text), base_(base) {}

    Header parse() {
        Header header;
        std::set<std::string> seen;
        skip_space();
        members([&](const std::string& key, size_t key_at) {
            if (!seen.insert(key).second) fail_at(key_at, "duplicate key " + quoted(key));
            if (key == "__metadata__") {
                header.metadata = string_map();
            } else {
                header.tensors.push_back(tensor(key));
            }
        });
        skip_space();  // the writer pads the header with spaces to a multiple of 8 bytes
        if (p_ != end_) fail("unexpected data after the header's JSON object");
        return header;
    }

   private:
    // Walks a JSON object, calling member(key, key_at) with the parser at each member's value.
    template <typename F>
    void members(F member) {
        expect('{');
        skip_space();
        if (peek() != '}') {
            for (;;) {
                skip_space();
                const size_t key_at = offset();
                const std::string key = string();
                skip_space();
                expect(':');
                skip_space();
                member(key, key_at);
                skip_space();
                if (peek() != ',') break;
                ++p_;
            }
        }
        expect('}');
    }

    size_t offset() const { return base_ + static_cast<size_t>(p_ - text_); }

    [[noreturn]] void fail_at(size_t at, const std::string& what) const {
        throw FormatError("bad header JSON at byte " + std::to_string(at) + ": " + what);
    }
    [[noreturn]] void fail(const std::string& what) const { fail_at(offset(), what); }

    int peek() const { return p_ < end_ ? static_cast<unsigned char>(*p_) : -1; }

    void skip_space() {
        while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
    }

    void expect(char c) {
        if (peek() != static_cast<unsigned char>(c)) {
            fail(std::string("expected '") + c + "', found " + describe_here());
        }
        ++p_;
    }

    std::string describe_here() const {
        if (p_ >= end_) return "the end of the header";
        const unsigned char c = static_cast<unsigned char>(*p_);
        if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
        return "byte 0x" + hex(c, 2);
    }

    static std::string hex(unsigned v, int digits) {
        static const char* d = "0123456789abcdef";
        std::string out(digits, '0');
        for (int i = digits - 1; i >= 0; --i, v >>= 4) out[i] = d[v & 15];
        return out;
    }

    unsigned hex4() {
        if (end_ - p_ < 4) fail("truncated \\u escape");
        unsigned v = 0;
        for (int i = 0; i < 4; ++i, ++p_) {
            const char c = *p_;
            v <<= 4;
            if (c >= '0' && c <= '9')
                v |= c - '0';
            else if (c >= 'a' && c <= 'f')
                v |= c - 'a' + 10;
            else if (c >= 'A' && c <= 'F')
                v |= c - 'A' + 10;
            else
                fail("bad hex digit in \\u escape");
        }
        return v;
    }

    static void append_utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }

    // One UTF-8 sequence copied as is, after checking it is well formed (Python must be able to
    // decode every name).
    void utf8_sequence(std::string& out) {
        const unsigned char c = static_cast<unsigned char>(*p_);
        int extra = 0;
        unsigned cp = 0, min = 0;
        if (c >= 0xC2 && c <= 0xDF)
            extra = 1, cp = c & 0x1F, min = 0x80;
        else if (c >= 0xE0 && c <= 0xEF)
            extra = 2, cp = c & 0x0F, min = 0x800;
        else if (c >= 0xF0 && c <= 0xF4)
            extra = 3, cp = c & 0x07, min = 0x10000;
        else
            fail("invalid UTF-8 in a string");
        if (end_ - p_ < extra + 1) fail("invalid UTF-8 in a string");
        for (int i = 1; i <= extra; ++i) {
            const unsigned char k = static_cast<unsigned char>(p_[i]);
            if ((k & 0xC0) != 0x80) fail("invalid UTF-8 in a string");
            cp = (cp << 6) | (k & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            fail("invalid UTF-8 in a string");
        }
        out.append(p_, p_ + extra + 1);
        p_ += extra + 1;
    }

    std::string string() {
        if (peek() != '"') fail("expected a string, found " + describe_here());
        ++p_;
        std::string out;
        for (;;) {
            if (p_ >= end_) fail("unterminated string");
            const unsigned char c = static_cast<unsigned char>(*p_);
            if (c == '"') {
                ++p_;
                return out;
            }
            if (c < 0x20) fail("control character in a string");
            if (c >= 0x80) {
                utf8_sequence(out);
                continue;
            }
            if (c != '\\') {
                out += static_cast<char>(c);
                ++p_;
                continue;
            }
            ++p_;
            if (p_ >= end_) fail("unterminated string");
            const char e = *p_++;
            switch (e) {
                case '"':
                    out += '"';
                    break;
                case '\\':
                    out += '\\';
                    break;
                case '/':
                    out += '/';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'n':
                    out += '\n';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'u': {
                    unsigned cp = hex4();
                    if (cp >= 0xDC00 && cp <= 0xDFFF) fail("unpaired surrogate in \\u escape");
                    if (cp >= 0xD800 && cp <= 0xDBFF) {
                        if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') {
                            fail("unpaired surrogate in \\u escape");
                        }
                        p_ += 2;
                        const unsigned low = hex4();
                        if (low < 0xDC00 || low > 0xDFFF) fail("unpaired surrogate in \\u escape");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    }
                    append_utf8(out, cp);
                    break;
                }
                default:
                    --p_;
                    fail("bad escape \\" + describe_here());
            }
        }
    }

    uint64_t integer() {
        if (peek() == '-') fail("negative number where a size or offset belongs");
        if (peek() < '0' || peek() > '9')
            fail("expected a non-negative integer, found " + describe_here());
        if (peek() == '0' && p_ + 1 < end_ && p_[1] >= '0' && p_[1] <= '9') {
            fail("leading zero in a number");
        }
        uint64_t v = 0;
        while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
            const uint64_t digit = static_cast<uint64_t>(*p_ - '0');
            if (v > (UINT64_MAX - digit) / 10) fail("integer too large");
            v = v * 10 + digit;
            ++p_;
        }
        if (peek() == '.' || peek() == 'e' || peek() == 'E')
            fail("expected an integer, found a fraction or exponent");
        return v;
    }

    std::vector<uint64_t> integer_array() {
        std::vector<uint64_t> out;
        expect('[');
        skip_space();
        if (peek() == ']') {
            ++p_;
            return out;
        }
        for (;;) {
            skip_space();
            out.push_back(integer());
            skip_space();
            if (peek() == ',') {
                ++p_;
                continue;
            }
            expect(']');
            return out;
        }
    }

    std::map<std::string, std::string> string_map() {
        std::map<std::string, std::string> out;
        members([&](const std::string& key, size_t key_at) {
            if (peek() != '"')
                fail("__metadata__ values must be strings, found " + describe_here());
            if (!out.emplace(key, string()).second) fail_at(key_at, "duplicate __metadata__ key");
        });
        return out;
    }

    TensorEntry tensor(const std::string& name) {
        TensorEntry t;
        t.name = name;
        bool has_dtype = false, has_shape = false, has_offsets = false;
        const size_t start = offset();
        if (peek() != '{')
            fail("tensor " + quoted(name) + ": expected an object, found " + describe_here());
        members([&](const std::string& key, size_t key_at) {
            bool* seen = nullptr;
            if (key == "dtype") {
                seen = &has_dtype;
                t.dtype = string();
            } else if (key == "shape") {
                seen = &has_shape;
                t.shape = integer_array();
            } else if (key == "data_offsets") {
                seen = &has_offsets;
                const size_t at = offset();
                const auto offsets = integer_array();
                if (offsets.size() != 2) {
                    fail_at(at, "tensor " + quoted(name) +
                                    ": data_offsets must hold 2 integers, not " +
                                    std::to_string(offsets.size()));
                }
                t.begin = offsets[0];
                t.end = offsets[1];
            } else {
                fail_at(key_at, "tensor " + quoted(name) + ": unknown field " + quoted(key));
            }
            if (seen_twice(*seen))
                fail_at(key_at, "tensor " + quoted(name) + ": duplicate field " + quoted(key));
        });
        if (!has_dtype || !has_shape || !has_offsets) {
            const char* missing = !has_dtype ? "dtype" : !has_shape ? "shape" : "data_offsets";
            fail_at(start, "tensor " + quoted(name) + ": missing field '" + missing + "'");
        }
        return t;
    }

    // Marks a field as seen; true when it already was.
    static bool seen_twice(bool& flag) {
        const bool before = flag;
        flag = true;
        return before;
    }

    const char* p_;
    const char* end_;
    const char* text_;
    size_t base_;
};

}  // namespace

Header parse_header(const char* text, size_t size, size_t base) {
    return Parser(text, size, base).parse();
}

void validate(Header& header, uint64_t data_size) {
    auto& ts = header.tensors;
    for (const auto& t : ts) {
        const std::string who = "tensor " + quoted(t.name) + ": ";
        const size_t item = dtype_size(t.dtype);
        if (t.dtype == "F4" || t.dtype == "F6_E2M3" || t.dtype == "F6_E3M2") {
            throw FormatError(who + "dtype " + t.dtype +
                              " has no gpukit dtype (packed sub-byte types are not supported)");
        }
        if (item == 0) throw FormatError(who + "unknown dtype " + quoted(t.dtype));
        if (t.end < t.begin) {
            throw FormatError(who + "data offsets [" + std::to_string(t.begin) + ", " +
                              std::to_string(t.end) + ") end before they begin");
        }
        if (t.end > data_size) {
            throw FormatError(who + "data [" + std::to_string(t.begin) + ", " +
                              std::to_string(t.end) + ") lies past the end of the data section (" +
                              std::to_string(data_size) + " bytes; is the file truncated?)");
        }
        // prod(shape) * itemsize, with any overflow meaning "disagrees" (the range fits in a file).
        uint64_t expected = item;
        bool overflow = false;
        bool empty = false;
        for (uint64_t d : t.shape) {
            if (d == 0) empty = true;
            if (d != 0 && expected > UINT64_MAX / d)
                overflow = true;
            else
                expected *= d;
        }
        if (empty) expected = 0, overflow = false;
        std::string shape = "[";
        for (size_t i = 0; i < t.shape.size(); ++i)
            shape += (i ? ", " : "") + std::to_string(t.shape[i]);
        shape += "]";
        if (overflow || expected != t.end - t.begin) {
            throw FormatError(
                who + "shape " + shape + " of " + t.dtype + " needs " +
                (overflow ? std::string("more than 2^64") : std::to_string(expected)) +
                " bytes but data_offsets hold " + std::to_string(t.end - t.begin));
        }
    }
    std::stable_sort(ts.begin(), ts.end(), [](const TensorEntry& a, const TensorEntry& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    // Empty tensors occupy no bytes and overlap nothing; the others must tile the data section
    // exactly, as the reference implementation requires (no overlaps, no gaps, no trailing bytes).
    const TensorEntry* prev = nullptr;
    uint64_t covered = 0;  // [0, covered) belongs to the tensors seen so far
    for (const auto& t : ts) {
        if (t.begin == t.end) continue;
        if (t.begin < covered) {
            throw FormatError("tensor " + quoted(t.name) + ": data [" + std::to_string(t.begin) +
                              ", " + std::to_string(t.end) + ") overlaps " + quoted(prev->name) +
                              " [" + std::to_string(prev->begin) + ", " +
                              std::to_string(prev->end) + ")");
        }
        if (t.begin > covered) {
            throw FormatError("tensor " + quoted(t.name) + ": data [" + std::to_string(t.begin) +
                              ", " + std::to_string(t.end) + ") leaves a gap: bytes [" +
                              std::to_string(covered) + ", " + std::to_string(t.begin) +
                              ") of the data section belong to no tensor");
        }
        covered = t.end;
        prev = &t;
    }
    if (covered != data_size) {
        throw FormatError("the data section has " + std::to_string(data_size) +
                          " bytes but the tensors cover only [0, " + std::to_string(covered) + ")" +
                          (prev ? " (the last is " + quoted(prev->name) + ")" : ""));
    }
}

}  // namespace gpukit::safetensors

import Foundation

/// Dates and data as the `JSONDecoder` strategies the tape decoder copies read them.
extension JSONTapeDecoding {
  func date(at index: Int, in parent: JSONTapeDecoder?, key: (any CodingKey)?) throws -> Date {
    let token = tape.tokens[index]
    switch dates {
    case .deferred:
      return try Date(from: JSONTapeDecoder(state: self, index: index, parent: parent, key: key))
    case .secondsSince1970:
      return Date(timeIntervalSince1970: try double(token))
    case .millisecondsSince1970:
      return Date(timeIntervalSince1970: try double(token) / 1000.0)
    case .iso8601:
      let text = try string(token)
      if let date = Self.plainISO8601(text) { return date }
      if let known = parsedDates[text] {
        guard let known else { throw giveUp() }
        return known
      }
      if parsedDates.count >= 4_096 { parsedDates.removeAll() }
      let date = try? Date.ISO8601FormatStyle().parse(text)
      parsedDates[text] = date
      guard let date else { throw giveUp() }
      return date
    case .custom(let closure):
      return try closure(JSONTapeDecoder(state: self, index: index, parent: parent, key: key))
    }
  }

  /// `yyyy-MM-ddTHH:mm:ssZ` with a year from 1900 to 9999 and every field in range, read
  /// here (the form almost every ISO 8601 date of an import has); other texts go to Foundation.
  static func plainISO8601(_ text: String) -> Date? {
    var text = text
    return text.withUTF8 { bytes -> Date? in
      guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
        bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
        bytes[19] == UInt8(ascii: "Z")
      else { return nil }
      func number(_ range: Range<Int>) -> Int? {
        var value = 0
        for index in range {
          let digit = bytes[index] &- UInt8(ascii: "0")
          guard digit < 10 else { return nil }
          value = value * 10 + Int(digit)
        }
        return value
      }
      guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
        let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
        year >= 1900, (1...12).contains(month), hour < 24, minute < 60, second < 60
      else { return nil }
      let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
      let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
      guard day >= 1, day <= lengths[month - 1] else { return nil }
      // Days from 1970-01-01 in the proleptic Gregorian calendar (which Foundation's agrees
      // with from 1583 on).
      let shiftedYear = month <= 2 ? year - 1 : year
      let era = shiftedYear / 400
      let yearOfEra = shiftedYear - era * 400
      let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
      let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
      let days = era * 146_097 + dayOfEra - 719_468
      let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second
      return Date(timeIntervalSince1970: Double(seconds))
    }
  }

  func bytes(at index: Int, in parent: JSONTapeDecoder?, key: (any CodingKey)?) throws -> Data {
    switch data {
    case .deferred:
      return try Data(from: JSONTapeDecoder(state: self, index: index, parent: parent, key: key))
    case .base64:
      guard let data = Data(base64Encoded: try string(tape.tokens[index])) else { throw giveUp() }
      return data
    case .custom(let closure):
      return try closure(JSONTapeDecoder(state: self, index: index, parent: parent, key: key))
    }
  }
}

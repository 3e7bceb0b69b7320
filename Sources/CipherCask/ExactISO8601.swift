import Foundation

/// ISO 8601 date text that reads back as the very same `Date`: how `JSONCaskCoder` writes dates.
///
/// Whole seconds are written as `2026-03-01T18:00:00Z` (UTC), exactly what JSONEncoder's
/// `.iso8601` strategy writes, so objects stored that way still read. A date with a fraction of
/// a second gets `.` and the shortest digits that convert back to the same `Double`
/// (`2026-03-01T18:00:00.25Z`), where `.iso8601` would drop the fraction and an object would no
/// longer read back equal to what was saved.
///
/// Years 1583 to 9999 are converted with integer arithmetic, several times faster (`cask-bench
/// coders` measures it); earlier years, where Foundation switches to the Julian calendar, and
/// any other form go through Foundation's `Date.ISO8601FormatStyle`, as `.iso8601` does.
enum ExactISO8601 {
  private static let formatStyle = Date.ISO8601FormatStyle()
  /// Seconds from 1970-01-01 to 2001-01-01, Foundation's reference date.
  private static let referenceDateUnixSeconds: Int64 = 978_307_200

  /// The text of `date`, or `nil` when no text of this form reads back as the very same date:
  /// dates some 30,000 years or more from now, and infinities (the caller writes those another
  /// way; `JSONCaskCoder` writes a number).
  static func string(from date: Date) -> String? {
    let interval = date.timeIntervalSinceReferenceDate
    let whole = interval.rounded(.down)
    guard interval.isFinite, abs(whole) < 1e12 else { return nil }
    let wholeText = wholeSecondsText(Int64(whole))
    var text = wholeText ?? String(formatStyle.format(Date(timeIntervalSinceReferenceDate: whole)))
    guard text.hasSuffix("Z") else { return nil }
    text.removeLast()
    if whole != interval {
      let digits =
        interval < 0 && interval > -0.5
        ? complement(shortestDigits(of: -interval))  // 1 + interval is not always a Double
        : shortestDigits(of: interval - whole)  // exact: whole is 0 or within 2x of interval
      text += "." + digits
    }
    text += "Z"
    // The integer path is exact by construction; Foundation's text (years before 1583 and after
    // 9999) is kept only when it reads back.
    if wholeText == nil, self.date(from: text)?.timeIntervalSinceReferenceDate != interval { return nil }
    return text
  }

  /// The date `text` names, or `nil` if it is not ISO 8601 as `string(from:)` writes it.
  static func date(from text: String) -> Date? {
    var utf8 = Array(text.utf8)
    var fraction = 0.0
    var fractionDigits = ""
    if let dot = utf8.firstIndex(of: UInt8(ascii: ".")) {
      let end = utf8[(dot + 1)...].firstIndex { !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ?? utf8.endIndex
      fractionDigits = String(decoding: utf8[(dot + 1)..<end], as: UTF8.self)
      guard !fractionDigits.isEmpty, let value = Double("0." + fractionDigits) else { return nil }
      fraction = value
      utf8.removeSubrange(dot..<end)
    }
    let base: Double
    if let seconds = referenceSeconds(utf8) {
      base = Double(seconds)
    } else if let parsed = try? formatStyle.parse(String(decoding: utf8, as: UTF8.self)) {
      base = parsed.timeIntervalSinceReferenceDate
    } else {
      return nil
    }
    // string(from:) wrote -0.5 < interval < 0 as the complement of -interval's digits.
    if base == -1, fraction > 0.5, let magnitude = Double("0." + complement(fractionDigits)) {
      return Date(timeIntervalSinceReferenceDate: -magnitude)
    }
    return Date(timeIntervalSinceReferenceDate: base + fraction)
  }

  // MARK: Whole seconds

  /// `yyyy-MM-ddTHH:mm:ssZ` of `seconds` after the reference date, or `nil` outside years 1583
  /// to 9999.
  private static func wholeSecondsText(_ seconds: Int64) -> String? {
    let unix = seconds + referenceDateUnixSeconds
    let (days, secondOfDay) = (unix.floorDivided(by: 86_400), unix.floorModulo(86_400))
    let (year, month, day) = civil(fromDays: days)
    guard (1583...9999).contains(year) else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(20)
    func append(_ value: Int64, digits: Int) {
      var divisor: Int64 = 1
      for _ in 1..<digits { divisor *= 10 }
      var rest = value
      while divisor > 0 {
        bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
        rest %= divisor
        divisor /= 10
      }
    }
    append(year, digits: 4)
    bytes.append(UInt8(ascii: "-"))
    append(month, digits: 2)
    bytes.append(UInt8(ascii: "-"))
    append(day, digits: 2)
    bytes.append(UInt8(ascii: "T"))
    append(secondOfDay / 3600, digits: 2)
    bytes.append(UInt8(ascii: ":"))
    append(secondOfDay / 60 % 60, digits: 2)
    bytes.append(UInt8(ascii: ":"))
    append(secondOfDay % 60, digits: 2)
    bytes.append(UInt8(ascii: "Z"))
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Seconds after the reference date named by exactly `yyyy-MM-ddTHH:mm:ssZ` with a year from
  /// 1583, or `nil`.
  private static func referenceSeconds(_ utf8: [UInt8]) -> Int64? {
    guard utf8.count == 20, utf8[4] == UInt8(ascii: "-"), utf8[7] == UInt8(ascii: "-"), utf8[10] == UInt8(ascii: "T"),
      utf8[13] == UInt8(ascii: ":"), utf8[16] == UInt8(ascii: ":"), utf8[19] == UInt8(ascii: "Z")
    else { return nil }
    func number(_ range: Range<Int>) -> Int64? {
      var value: Int64 = 0
      for byte in utf8[range] {
        guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
        value = value * 10 + Int64(byte - UInt8(ascii: "0"))
      }
      return value
    }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
      let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
      year >= 1583, (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24,
      minute < 60, second < 60
    else { return nil }
    let days = self.days(fromCivil: year, month, day)
    return days * 86_400 + hour * 3600 + minute * 60 + second - referenceDateUnixSeconds
  }

  /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
  private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
    let y = month <= 2 ? year - 1 : year
    let era = y.floorDivided(by: 400)
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  /// The date of the proleptic Gregorian calendar `days` after 1970-01-01.
  private static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
    let z = days + 719_468
    let era = z.floorDivided(by: 146_097)
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let shiftedMonth = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
    let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  private static func daysIn(month: Int64, year: Int64) -> Int64 {
    switch month {
    case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
  }

  // MARK: Fractions

  /// The digits after `0.` of the shortest decimal that reads back as `fraction` (0 < fraction < 1).
  private static func shortestDigits(of fraction: Double) -> String {
    let shortest = fraction.description  // "0.25", or "1.5e-07" for small fractions
    guard let e = shortest.firstIndex(of: "e"), let exponent = Int(shortest[shortest.index(after: e)...]) else {
      return String(shortest.dropFirst(2))
    }
    let mantissa = shortest[..<e].filter { $0 != "." }
    return String(repeating: "0", count: max(0, -exponent - 1)) + mantissa
  }

  /// The n digits of 10^n - `digits`, for n the number of digits: "25" -> "75", "001" -> "999".
  private static func complement(_ digits: String) -> String {
    var result: [UInt8] = digits.utf8.map { UInt8(ascii: "9") - ($0 - UInt8(ascii: "0")) }
    var index = result.count - 1
    while index >= 0 {  // add one to the nines' complement
      if result[index] == UInt8(ascii: "9") {
        result[index] = UInt8(ascii: "0")
        index -= 1
      } else {
        result[index] += 1
        break
      }
    }
    return String(decoding: result, as: UTF8.self)
  }
}

extension Int64 {
  /// The quotient rounded towards minus infinity.
  fileprivate func floorDivided(by divisor: Int64) -> Int64 {
    let quotient = self / divisor
    return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
  }

  /// The remainder with the divisor's sign.
  fileprivate func floorModulo(_ divisor: Int64) -> Int64 {
    self - floorDivided(by: divisor) * divisor
  }
}

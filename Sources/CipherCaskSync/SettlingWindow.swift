import Foundation

/// Which records a listing can vouch for on a server that dates a record when its statement
/// runs rather than when its transaction commits (Kinto on PostgreSQL).
///
/// A transaction open while a listing runs may commit afterwards a record dated before the
/// newest one listed; it began after the listing's time less the settling margin (the
/// longest a transaction stays open), and so is dated after it. Records dated up to that
/// point are therefore all in the listing, and the next listing starts there: what it lists
/// again is already stored (a no-op when applied), and what committed late is listed then.
enum SettlingWindow {
  /// The settled timestamp after a listing: the listing's server time less `margin`
  /// (milliseconds), never before `previous` nor after `cursor`.
  ///
  /// - Parameters:
  ///   - response: an answer sent before the listing's first page was read (its `Date`).
  ///   - cursor: the cursor after the listing.
  ///   - previous: the settled timestamp before the listing; `nil` for a full listing.
  ///   - margin: `KintoServer.settlingMilliseconds`; 0 settles everything listed.
  /// - Returns: without a readable `Date`, nothing more is taken as settled: `previous`, or
  ///   0 (everything is listed again) after a full listing.
  static func settled(after response: HTTPResponse, cursor: Int64, previous: Int64?, margin: Int64) -> Int64 {
    guard margin > 0 else { return cursor }
    let floor = min(previous ?? 0, cursor)
    guard let now = serverTime(of: response) else { return floor }
    return min(cursor, max(floor, now - margin))
  }

  /// The server's clock when it answered, in milliseconds since 1970, from the `Date` header
  /// (an IMF-fixdate, whole seconds; the part of a second left out only makes it earlier).
  static func serverTime(of response: HTTPResponse) -> Int64? {
    guard let text = response.header("Date") else { return nil }
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(secondsFromGMT: 0)
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    guard let date = formatter.date(from: text) else { return nil }
    return Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
  }
}

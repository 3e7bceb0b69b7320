import CipherCask
import Foundation

extension RemoteCollection {
  /// The objects of a response, and the next page's URL when the body says so.
  struct DecodedPage {
    var objects: [T]
    var next: String?
  }

  /// Finds the objects in a body (bare, array or enveloped), decodes each as `T`, and checks
  /// that its id matches the remote id key.
  func decodeObjects(from body: Data) throws -> DecodedPage {
    let root: Any
    do {
      root = try JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
    } catch {
      throw SyncError.decoding("the body is not JSON")
    }
    var container: Any = root
    var next: String?
    if case .key(let key) = configuration.envelope {
      guard let envelope = root as? [String: Any], let inner = envelope[key] else {
        throw SyncError.decoding("the response has no '\(key)' envelope")
      }
      container = inner
      if case .nextURL(let nextKey) = configuration.pagination { next = try Self.link(envelope[nextKey], key: nextKey) }
    } else if case .nextURL(let nextKey) = configuration.pagination, let envelope = root as? [String: Any],
      envelope[configuration.remoteIDKey] == nil
    {
      next = try Self.link(envelope[nextKey], key: nextKey)
    }
    let elements: [Any]
    if let array = container as? [Any] {
      elements = array
    } else if container is [String: Any] {
      elements = [container]
    } else if container is NSNull {
      elements = []
    } else {
      throw SyncError.decoding("expected an object or an array of objects")
    }
    let decoder = configuration.makeDecoder()
    var objects: [T] = []
    objects.reserveCapacity(elements.count)
    for (index, element) in elements.enumerated() {
      guard let dictionary = element as? [String: Any] else {
        throw SyncError.decoding("element \(index) is not an object")
      }
      guard let uid = dictionary[configuration.remoteIDKey].flatMap(Self.idString) else {
        throw SyncError.decoding("element \(index) has no '\(configuration.remoteIDKey)'")
      }
      let object: T
      do {
        let data = try JSONSerialization.data(withJSONObject: dictionary)
        object = try decoder.decode(T.self, from: data)
      } catch {
        throw SyncError.decoding("element \(index): \(CollectionError.summary(of: error))")
      }
      guard object.id.description == uid else {
        throw SyncError.decoding("element \(index): its id does not match '\(configuration.remoteIDKey)'")
      }
      objects.append(object)
    }
    return DecodedPage(objects: objects, next: next)
  }

  /// The next page's link in a `next` member's value, or `nil` on the last page: no member,
  /// `null` or an empty string.
  ///
  /// - Throws: `SyncError.decoding` for any other value (a number, an object): read as "no
  ///   next page", it would end the walk as complete with the pages after it missing.
  static func link(_ value: Any?, key: String) throws -> String? {
    switch value {
    case nil, is NSNull: return nil
    case let link as String: return link.isEmpty ? nil : link
    default: throw SyncError.decoding("its '\(key)' is neither a link nor null")
    }
  }

  /// A JSON id (string or number) as text.
  static func idString(_ value: Any) -> String? {
    if let string = value as? String { return string }
    if let number = value as? NSNumber {
      let double = number.doubleValue
      if double == double.rounded(), abs(double) < 1e15 { return String(number.int64Value) }
      return number.stringValue
    }
    return nil
  }
}

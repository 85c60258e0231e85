/**
 * A few lines of DOM building instead of a framework: pages are built once per visit and
 * updated in place where they change, which is all a form-and-list dashboard needs.
 */

/** What an element may hold: nodes, text, numbers, nothing, or lists of them. */
export type Child = Node | string | number | false | null | undefined | ReadonlyArray<Child>

/** Attributes and listeners: `on*` functions become listeners, `true` a bare attribute, `false`/`undefined` none. */
export type Props = Record<string, unknown>

const append = (parent: Node, child: Child): void => {
  if (child === null || child === undefined || child === false) return
  if (Array.isArray(child)) {
    for (const c of child) append(parent, c)
    return
  }
  parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)))
}

/** An element with attributes, listeners and children. */
export const h = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props | null = null,
  ...children: ReadonlyArray<Child>
): HTMLElementTagNameMap[K] => {
  const element = document.createElement(tag)
  if (props) {
    for (const [name, value] of Object.entries(props)) {
      if (value === undefined || value === false || value === null) continue
      if (name.startsWith("on") && typeof value === "function") {
        element.addEventListener(name.slice(2), value as EventListener)
      } else if (name === "value" && "value" in element) {
        ;(element as HTMLInputElement).value = String(value)
      } else {
        element.setAttribute(name, value === true ? "" : String(value))
      }
    }
  }
  append(element, children)
  return element
}

/** Replaces an element's children. */
export const replace = (parent: Element, ...children: ReadonlyArray<Child>): void => {
  parent.replaceChildren()
  append(parent, children)
}

let ids = 0
/** A document-unique id for labels and descriptions. */
export const uid = (prefix: string): string => `${prefix}-${++ids}`

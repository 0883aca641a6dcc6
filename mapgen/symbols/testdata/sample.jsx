import React from "react";

// Badge shows a count.
export function Badge({ count }) {
  return <span className="badge">{count}</span>;
}

const List = ({ items }) => (
  <ul>
    {items.map((i) => (
      <Badge key={i} count={i} />
    ))}
  </ul>
);

export default List;

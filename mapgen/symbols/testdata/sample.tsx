import React from "react";

/** Props of the greeting. */
interface Props {
  who: string;
}

// Greeting renders a hello.
export function Greeting({ who }: Props) {
  return <div className="hi">Hello {who}</div>;
}

export const Farewell = (p: Props) => <span>Bye {p.who}</span>;

export default class Panel extends React.Component<Props> {
  render() {
    return <Greeting who={this.props.who} />;
  }
}

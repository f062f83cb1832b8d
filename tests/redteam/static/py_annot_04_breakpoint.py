# family: annotation-not-binding — with a string annotation
breakpoint: "callable"
breakpoint()

function* g() {
  const h = () => yield /x/g;
}

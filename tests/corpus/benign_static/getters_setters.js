const account = {
  _balance: 0,
  history: [],
  get balance() {
    return this._balance;
  },
  set balance(v) {
    this.history.push(v - this._balance);
    this._balance = v;
  },
  deposit(n) {
    this.balance = this.balance + n;
    return this;
  },
};

account.deposit(10).deposit(5);
console.log(account.balance, account.history, Object.keys(account));
